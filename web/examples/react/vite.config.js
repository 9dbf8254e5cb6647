// The example's Vite set-up. No plugin: Vite 8 compiles .jsx itself (with Oxc), here with
// React's automatic runtime (react/jsx-runtime). Without @vitejs/plugin-react there is no Fast
// Refresh: an edit reloads the page in `npm run dev`.
export default {
  base: "./", // the built app works from any folder: ./build.sh serve shows it at /examples/react/dist/
  oxc: { jsx: { runtime: "automatic" } },
  // `npm run dev`: the upload URL and the reference server come from ./build.sh serve.
  server: { proxy: { "/api": "http://127.0.0.1:8080", "/ref": "http://127.0.0.1:8080" } },
};
