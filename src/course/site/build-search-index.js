// `course build` runs this with node: the search documents of one site (JSON on stdin) in, MiniSearch's serialised
// index out (stdout), built with the options the pages load it with (search-options.js).
// Arguments: the MiniSearch package's CommonJS build, then search-options.js.
const MiniSearch = require(process.argv[2]);
const options = require(process.argv[3]);

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const index = new MiniSearch(options);
  index.addAll(JSON.parse(input));
  process.stdout.write(JSON.stringify(index));
});
