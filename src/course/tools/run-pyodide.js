// Runs the Python code on stdin in the Pyodide runtime at argv[2] (its pyodide.mjs), with the folder argv[3] mounted
// at /work; what the code prints comes out on stdout. Loads nothing but the runtime's own files.
const { readFileSync } = require("node:fs");
const { join, resolve } = require("node:path");
const { pathToFileURL } = require("node:url");

async function main() {
  const [runtime, folder] = process.argv.slice(2).map((p) => resolve(p));
  const { loadPyodide } = await import(pathToFileURL(join(runtime, "pyodide.mjs")).href);
  const pyodide = await loadPyodide({ indexURL: `${runtime}/`, packages: [] });
  pyodide.FS.mkdirTree("/work");
  pyodide.mountNodeFS("/work", folder);
  pyodide.runPython(readFileSync(0, "utf8"));
}

main().catch((error) => {
  console.error(error.message || error);
  process.exit(1);
});
