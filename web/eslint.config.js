// ESLint for the page (make lint-web, run by .ci/run): the recommended JavaScript and
// TypeScript rules and React's rules of hooks. Type checking itself is tsc's (npm run typecheck).
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "e2e/results/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["src/**/*.{ts,tsx}"],
    languageOptions: { globals: globals.browser },
    plugins: { "react-hooks": reactHooks },
    rules: {
      "react-hooks/rules-of-hooks": "error",
      "react-hooks/exhaustive-deps": "error",
    },
  },
  {
    files: ["e2e/**/*.{ts,mjs}", "*.{js,ts}"],
    languageOptions: { globals: globals.node },
  },
);
