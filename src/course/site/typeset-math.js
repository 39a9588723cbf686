// `course build` runs this with node: every formula of a site's pages typeset once, at build time, as MathJax
// would typeset it in the reader's browser (TeX in; SVG out, with MathML beside it for screen readers), so that a
// page loads no MathJax and typesets nothing, on a phone least of all.
// Argument: the mathjax package's folder. Stdin: [[[tex, display], …] per page]. Stdout: {styles, pages: [{formulas,
// glyphs} per page]}, or {errors: [[page, formula, message], …]} when a formula is not valid TeX.
const folder = process.argv[2];

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  require(folder).init({
    loader: { paths: { mathjax: folder + "/es5" }, load: ["input/tex-full", "output/svg", "a11y/assistive-mml"] },
    tex: { formatError: (jax, error) => { throw error; } },
    svg: { fontCache: "global" },  // the glyphs once per page, as the pages' MathJax drew them
    startup: { typeset: false },
  }).then((MathJax) => {
    const adaptor = MathJax.startup.adaptor;
    const cache = MathJax.startup.output.fontCache;
    const pages = [], errors = [];
    JSON.parse(input).forEach((formulas, page) => {
      cache.clearCache();
      const typeset = formulas.map(([tex, display], formula) => {
        try {
          return adaptor.outerHTML(MathJax.tex2svg(tex, { display }));
        } catch (error) {
          errors.push([page, formula, String(error.message || error)]);
          return "";
        }
      });
      pages.push({ formulas: typeset, glyphs: adaptor.outerHTML(cache.getCache()) });
    });
    const styles = adaptor.textContent(MathJax.svgStylesheet());
    process.stdout.write(JSON.stringify(errors.length ? { errors } : { styles, pages }));
  }).catch((error) => { process.stderr.write(String(error.stack || error)); process.exit(1); });
});
