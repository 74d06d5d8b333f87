// Fake `cairn:deploy/host`: log records are kept for the tests to read.
import { state } from "./state.mjs";

export function log(severity, urn, message) {
  state().logs.push({ severity, urn, message });
}
