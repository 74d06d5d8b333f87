// Fake `cairn:deploy/context`: the deployment and configuration the test set.
import { state } from "./state.mjs";

export function deployment() {
  return { ...state().deployment };
}

export function config() {
  return state().config;
}
