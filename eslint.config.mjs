// ESLint for the scripts the sites load (src/course/site/, a lesson's own page scripts in lessons/) and the ones that
// `course build` runs with node (the search index, the formulas, Pyodide's Python); tests/test_lint.py runs it in `make test`.
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["_site/", ".course-cache/", "_freeze/", ".quarto/", "autograder/", "demo/", ".venv/"] },
  js.configs.recommended,
  {
    files: ["src/course/site/**/*.js", "lessons/**/*.js"],
    languageOptions: { sourceType: "script", globals: globals.browser },
    // a page's scripts share one global scope: a script keeps its names to itself
    rules: { "no-implicit-globals": "error" },
  },
  {
    files: ["src/course/site/build-search-index.js", "src/course/site/typeset-math.js", "src/course/tools/*.js"],
    languageOptions: { sourceType: "commonjs", globals: globals.node },
  },
  {
    // loaded by the pages and required by the index builder
    files: ["src/course/site/search-options.js"],
    languageOptions: { globals: { ...globals.browser, module: "readonly" } },
  },
];
