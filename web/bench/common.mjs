// What the bench's parts share in Node: the median of their rounds, the lists the environment
// picks parts of a part by, the script by which an engine's bench page loads the module
// (window.ready: "ok", or what load() threw), and a file on disk picked in a page.

/** The median of xs (the upper one of an even count); NaN for none. */
export const median = (xs) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] : NaN);

/** The comma-separated names in environment variable `name`, or undefined where it is unset. */
export const pickedIn = (name) =>
  process.env[name]
    ?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/** A page's module script: loads dist/mediaupload.js into window.mu, then sets window.ready. */
export const LOAD_MODULE = `<script type="module">
  try {
    const { load } = await import("/dist/mediaupload.js");
    window.mu = await load();
    window.ready = "ok";
  } catch (e) {
    window.ready = "load: " + (e && e.message || e);
  }
</script>`;

/**
 * Picks the file at path in page (a harness page, any engine) as a user would: into an
 * `<input type=file id=…>` made on first use. The page reads it as document.getElementById(id).files[0].
 */
export async function pickFile(page, id, path) {
  await page.evaluate((id) => {
    if (document.getElementById(id)) return;
    document.body.append(Object.assign(document.createElement("input"), { type: "file", id }));
  }, id);
  await page.setInputFiles(`#${id}`, path);
}
