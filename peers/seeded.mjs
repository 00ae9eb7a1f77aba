// The seeded generator of the Node runtime peers (mulberry32): every run of
// peers/runtime-langchainjs.mjs and peers/runtime-ai-sdk.mjs sees the same script.

/** A function answering the next number in [0, 1) of the stream of `seed`. */
export function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
