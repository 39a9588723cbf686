// Runs the Python code on stdin in the Pyodide runtime at argv[2] (its pyodide.mjs), with the folder argv[3] mounted
// at /work; what the code prints comes out on stdout. Loads nothing but the runtime's own files.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [runtime, folder] = process.argv.slice(2).map((p) => resolve(p));
const { loadPyodide } = await import(pathToFileURL(join(runtime, "pyodide.mjs")).href);
const pyodide = await loadPyodide({ indexURL: `${runtime}/`, packages: [] });
pyodide.FS.mkdirTree("/work");
pyodide.mountNodeFS("/work", folder);
pyodide.runPython(readFileSync(0, "utf8"));
