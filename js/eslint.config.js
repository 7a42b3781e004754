// ESLint for the JavaScript mlclab ships (mlclab/notebook/static/*.js): ES modules that run in
// the browser, in JupyterLab, Notebook 7, VS Code, Colab and saved pages. tests/test_lint.py
// runs it; by hand, from the repository root (--config takes the paths below from there):
//   js/node_modules/.bin/eslint --config js/eslint.config.js mlclab/notebook/static
// eslint, @eslint/js and globals are js/package.json's devDependencies (./dev.sh setup installs
// them); this file lives in js/ so that its requires resolve there.
"use strict";

const js = require("@eslint/js");
const globals = require("globals");

// Browser globals whose names a local could well have had (confusing-browser-globals' list, the
// ones a module here could plausibly reach for).
const CONFUSING_GLOBALS = [
  "addEventListener", "blur", "close", "closed", "confirm", "defaultStatus", "event", "external",
  "find", "focus", "frameElement", "frames", "history", "innerHeight", "innerWidth", "length",
  "location", "locationbar", "menubar", "moveBy", "moveTo", "name", "onblur", "onerror",
  "onfocus", "onload", "onresize", "onunload", "open", "opener", "opera", "outerHeight",
  "outerWidth", "pageXOffset", "pageYOffset", "parent", "print", "removeEventListener",
  "resizeBy", "resizeTo", "screen", "screenLeft", "screenTop", "screenX", "screenY", "scroll",
  "scrollbars", "scrollBy", "scrollTo", "scrollX", "scrollY", "self", "status", "statusbar",
  "stop", "toolbar", "top",
];

module.exports = [
  // The vendored WebAssembly Graphviz is a build product (js/vendor_graphviz.py), not ours.
  { ignores: ["mlclab/notebook/static/vendor/"] },
  {
    files: ["mlclab/notebook/static/*.js"],
    languageOptions: {
      // No syntax newer than the browsers students use parse (ES2022: class fields, top-level
      // await, optional catch binding).
      ecmaVersion: 2022,
      sourceType: "module",
      globals: { ...globals.browser },
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      ...js.configs.recommended.rules,
      // Comparisons that coerce: "0" == 0, null == 0 (x == null, both nullish, stays allowed).
      eqeqeq: ["error", "smart"],
      // A browser global read by mistake for a missing local (window.name, window.event, ...):
      // no-undef cannot see these, since they exist.
      "no-restricted-globals": ["error", ...CONFUSING_GLOBALS.map((name) => ({
        name, message: `the page's window.${name}: declare a local, or write window.${name}`,
      }))],
      // Text from a DSL program, a graph or a saved page is never code.
      "no-eval": "error",
      "no-implied-eval": "error",
      "no-new-func": "error",
      "no-script-url": "error",
      // Bugs the recommended set leaves out.
      "array-callback-return": "error",
      "no-promise-executor-return": "error",
      "no-self-compare": "error",
      "no-template-curly-in-string": "error",
      "no-unmodified-loop-condition": "error",
      "no-unreachable-loop": "error",
      // A const or let read before its line runs in the same scope (a TDZ error at run time);
      // reads from inside a function that runs later are fine.
      "no-use-before-define": ["error", { functions: false, classes: true, variables: false }],
    },
  },
];
