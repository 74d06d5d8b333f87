// Fake `wasi:filesystem/preopens`: nothing granted.
export function getDirectories() {
  return [];
}
