// "● Record": a recording uploaded while it is made (the camera, or a moving test pattern drawn
// here where there is none), a ReadableStream of unknown length (docs/api.md, "Streams").

import { settings } from "./controls.js";
import { addStream } from "./uploads.js";
import { $ } from "./page.js";

let recording = null; // { recorder }

/** Starts a recording uploaded while it is made, or stops the one running. */
export async function toggleRecording() {
  const button = $("#record");
  if (recording) {
    recording.recorder.stop();
    return;
  }
  let media = null;
  let stopDrawing = () => {};
  try {
    media = await navigator.mediaDevices.getUserMedia({ video: true, audio: false });
  } catch {
    // No camera (or no permission): a moving test pattern, drawn here.
    const canvas = Object.assign(document.createElement("canvas"), { width: 640, height: 360 });
    const g = canvas.getContext("2d");
    const t0 = performance.now();
    const timer = setInterval(() => {
      const t = (performance.now() - t0) / 1000;
      g.fillStyle = `hsl(${(t * 60) % 360} 70% 45%)`;
      g.fillRect(0, 0, 640, 360);
      g.fillStyle = "#fff";
      g.font = "32px sans-serif";
      g.fillText(`mediaupload test pattern ${t.toFixed(1)} s`, 40, 80 + 200 * Math.abs(Math.sin(t)));
    }, 33);
    stopDrawing = () => clearInterval(timer);
    media = canvas.captureStream(30);
  }
  const recorder = new MediaRecorder(media, { mimeType: MediaRecorder.isTypeSupported("video/webm") ? "video/webm" : "" });
  const { readable, writable } = new TransformStream();
  const writer = writable.getWriter();
  let written = Promise.resolve();
  recorder.ondataavailable = (e) => {
    written = written.then(async () => writer.write(new Uint8Array(await e.data.arrayBuffer())));
  };
  recorder.onstop = () => {
    stopDrawing();
    for (const t of media.getTracks()) t.stop();
    written.then(() => writer.close(), (err) => writer.abort(err));
    recording = null;
    button.textContent = "● Record";
    button.setAttribute("aria-pressed", "false");
  };
  const stamp = new Date().toISOString().slice(11, 19).replaceAll(":", "");
  const type = (recorder.mimeType || "video/webm").split(";")[0];
  addStream({ name: `recording-${stamp}.webm`, size: 0, type }, { make: () => readable, again: false }, settings());
  recorder.start(1000);
  recording = { recorder };
  button.textContent = "■ Stop recording";
  button.setAttribute("aria-pressed", "true");
}
