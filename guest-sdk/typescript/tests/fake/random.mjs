// Fake `wasi:random/random`: real randomness from Node.
import { randomBytes } from "node:crypto";

export function getRandomBytes(length) {
  return new Uint8Array(randomBytes(length));
}
