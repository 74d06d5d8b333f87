// Fake `wasi:cli/environment`: the variables the test granted.
import { state } from "./state.mjs";

export function getEnvironment() {
  return state().environment;
}

export function getArguments() {
  return [];
}
