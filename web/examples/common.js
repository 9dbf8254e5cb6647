// What the example pages share: where to upload, and the module.
//
// The upload URL is the page's ?upload= (the tests point it at their reference server), else
// the reference server of `./build.sh serve` (its /api/config). ?fast=1 makes retries wait
// milliseconds instead of seconds (the tests' random faults); ?chunk=N fixes the chunk size.

import { load } from "/dist/mediaupload.js";

const params = new URLSearchParams(location.search);

/** The upload URI of the bucket, without a name (the file's name goes in the metadata). */
export async function uploadURL() {
  if (params.get("upload")) return params.get("upload");
  const config = await (await fetch("/api/config")).json();
  return new URL(config.targets.ref.upload, location.href).href;
}

/** Options of mu.upload that every example adds. */
export function uploadOptions() {
  const options = {};
  if (params.get("fast")) options.retry = { retries: 12, initialDelayMs: 20, maxDelayMs: 200, jitterMs: 0 };
  if (params.get("chunk")) options.chunkSize = Number(params.get("chunk"));
  return options;
}

export { load };
