// The page of every app here, given the `load` of the mediaupload it was built with: a file
// input whose file is uploaded to the page's ?upload= URL. The page says how it went in
// #status ("ready", "done 200 <name>", "failed <code>: <message>", "load failed: <message>"),
// for web/test/bundlers.test.mjs to read. ?wasmURL= is passed on to load().
export function uploadPage(load) {
  const params = new URLSearchParams(location.search);
  const status = document.getElementById("status");
  const wasmURL = params.get("wasmURL");
  load(wasmURL ? { wasmURL } : undefined).then(
    (mu) => {
      document.getElementById("file").addEventListener("change", async (e) => {
        const file = e.target.files[0];
        status.textContent = "uploading";
        try {
          const { status: code, metadata } = await mu.upload(file, {
            url: params.get("upload"),
            metadata: { name: file.name },
          });
          status.textContent = `done ${code} ${metadata.name}`;
        } catch (err) {
          status.textContent = `failed ${err.code}: ${err.message}`;
        }
      });
      status.textContent = "ready";
    },
    (err) => (status.textContent = `load failed: ${err.message}`),
  );
}
