// Short ASCII strings across Go's glue without TextEncoder or TextDecoder (issue "Many files",
// docs/performance.md "Many files"): web/js/build.mjs bundles Go's wasm_exec.js through
// patchGlue.
//
// Every name Go passes to JS (js.Value.Get("status"), a method's name, a js.ValueOf(string))
// goes through the glue's loadString, a TextDecoder.decode of a view of Go's memory; every JS
// string Go reads (js.Value.String()) through valuePrepareString, a TextEncoder.encode into a
// new Uint8Array, which valueLoadString then copies into Go's memory. A one-request upload
// makes about 30 of the first and 5 of the second, and in Chromium they cost the page's main
// thread about 2 µs and 8 µs each (a DevTools profile of 300 uploads of 1 KB in a row,
// 2026-11-26): a tenth of a millisecond an upload, of its 1.3 more than plain fetch. Almost all
// are short and ASCII; for those the patched glue reads or writes the bytes one by one through
// the glue's own DataView (no view, no buffer made), and hands valueLoadString the JS string
// itself in place of its encoding. Anything else takes the glue's own way.
//
// The patch replaces three lines of the glue and puts its helpers after a fourth (the decoder's),
// each found exactly once; a glue without them (another Go release) fails the build, naming the
// line, rather than being bundled unpatched.

/** The longest string, in bytes or UTF-16 units, that the short way takes. */
export const SHORT = 128;

// The helpers, defined once beside the glue's own encoder and decoder (they close over
// nothing of a Go instance: each call passes its DataView).
const HELPERS = `
	// mediaupload (web/js/glue-strings.mjs): short ASCII strings without TextEncoder or TextDecoder.
	const shortFromGo = (mem, addr, len) => {
		if (len > ${SHORT}) return null;
		let s = "";
		for (let i = 0; i < len; i++) {
			const c = mem.getUint8(addr + i);
			if (c > 0x7f) return null;
			s += String.fromCharCode(c);
		}
		return s;
	};
	const shortForGo = (s) => {
		if (s.length > ${SHORT}) return false;
		for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
		return true;
	};
`;

// [what the glue says, what it says instead]; each "what" is one line of wasm_exec.js, trimmed.
const PATCHES = [
  [
    `const decoder = new TextDecoder("utf-8");`,
    `const decoder = new TextDecoder("utf-8");${HELPERS}`,
  ],
  [
    // loadString: a string of Go's (a name, a js.ValueOf(string)).
    `return decoder.decode(new DataView(this._inst.exports.mem.buffer, saddr, len));`,
    `return shortFromGo(this.mem, saddr, len) ?? decoder.decode(new DataView(this._inst.exports.mem.buffer, saddr, len));`,
  ],
  [
    // valuePrepareString: the JS string itself where it is short ASCII (its length is its bytes').
    `const str = encoder.encode(String(loadValue(sp + 8)));`,
    `const js = String(loadValue(sp + 8)); const str = shortForGo(js) ? js : encoder.encode(js);`,
  ],
  [
    // valueLoadString: a prepared string written byte by byte, else the bytes copied.
    `loadSlice(sp + 16).set(str);`,
    `if (typeof str === "string") { const at = getInt64(sp + 16); for (let i = 0; i < str.length; i++) this.mem.setUint8(at + i, str.charCodeAt(i)); } else loadSlice(sp + 16).set(str);`,
  ],
];

/** wasm_exec.js's text with the short ways in; throws if a line to replace is not there once. */
export function patchGlue(text) {
  let out = text;
  for (const [from, to] of PATCHES) {
    const n = out.split(from).length - 1;
    if (n !== 1) {
      throw new Error(
        `web/js/glue-strings.mjs: wasm_exec.js has ${n} lines "${from}" (want one): the Go release changed its glue; ` +
          `mend the patch for it`,
      );
    }
    out = out.replace(from, () => to);
  }
  return out;
}
