// ESLint flat config for the TypeScript client and the Node helper scripts.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import globals from "globals";

export default tseslint.config(
  {
    ignores: ["extension/out/**", "extension/dist/**", "extension/bundled/**", "dist/**", "node_modules/**", ".e2e/**", "extension/test/e2e/artifacts/**"],
  },
  js.configs.recommended,
  {
    files: ["extension/src/**/*.ts", "extension/test/unit/**/*.ts"],
    extends: [...tseslint.configs.strictTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/restrict-template-expressions": ["error", { allowNumber: true }],
      "@typescript-eslint/no-floating-promises": "error",
      eqeqeq: "error",
      curly: "error",
    },
  },
  {
    // node:test's describe/it return promises that the runner itself awaits.
    files: ["extension/test/unit/**/*.ts"],
    rules: { "@typescript-eslint/no-floating-promises": "off" },
  },
  {
    files: ["scripts/**/*.mjs", "extension/test/e2e/**/*.mjs"],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    // Functions passed to page.evaluate() run inside the browser.
    files: ["extension/test/e2e/workbench.mjs"],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
);
