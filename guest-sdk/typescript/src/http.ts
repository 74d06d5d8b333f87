// Outbound HTTP for providers and programs: a synchronous request over wasi:http (QuickJS has
// no `fetch`), and a `fetch`-shaped wrapper around it. The host decides what a guest may reach:
// a provider the hosts its manifest requests (`capabilities.http`) and the user grants
// (`cairn:grants.<package>.http`), a program what `cairn:program.http` grants; private, loopback
// and link-local addresses only when that exact host is granted. A refusal is an `HttpError`
// naming the URL and the host (and the host fails the call as well).
//
// The wasi:http interfaces are imported under the build's names (`cairn:wasi-http`, …: see
// wasi-http.d.ts); the component the build makes imports wasi:http itself.

/// <reference path="./wasi-http.d.ts" />

import { subscribeDuration } from "cairn:wasi-clocks/monotonic-clock@0.2.12";
import { type Pollable, poll } from "cairn:wasi-io/poll@0.2.12";
import type { InputStream, OutputStream } from "cairn:wasi-io/streams@0.2.12";
import {
  type ErrorCode,
  Fields,
  type FutureIncomingResponse,
  IncomingBody,
  type IncomingResponse,
  type Method,
  OutgoingBody,
  OutgoingRequest,
  RequestOptions,
} from "cairn:wasi-http/types@0.2.12";
import { handle } from "cairn:wasi-http/outgoing-handler@0.2.12";
import { utf8Decode, utf8Encode } from "./values";

/** How long a request may take, from sending to the end of the response, unless it says. */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** The largest response body a request reads unless it says: the host refuses property
 * values over 16 MiB anyway, and a guest's memory is limited. */
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** What to send. */
export interface HttpRequest {
  /** `GET` unless given. */
  method?: string;
  /** Header names and values (values are sent as UTF-8). `host`, `connection` and
   * `transfer-encoding` are the host's to set; `content-length` is set for a body. */
  headers?: Record<string, string> | Array<[string, string]>;
  /** The body: text (sent as UTF-8) or bytes. */
  body?: string | Uint8Array | null;
  /** The whole exchange's limit, in milliseconds (`DEFAULT_TIMEOUT_MS` unless given). */
  timeoutMs?: number;
  /** The largest response body read, in bytes (`DEFAULT_MAX_RESPONSE_BYTES` unless given);
   * a larger one is an `HttpError` (`response-too-large`) and is not read further. */
  maxResponseBytes?: number;
}

/** A failed request. `code` is wasi:http's error code (`HTTP-request-denied` when the grant
 * refuses the host, `connection-refused`, `DNS-error`, …) or the SDK's own: `invalid-url`,
 * `invalid-request`, `timeout`, `response-too-large`, `body`. */
export class HttpError extends Error {
  constructor(
    readonly code: string,
    readonly url: string,
    readonly host: string,
    message: string,
  ) {
    super(message);
    this.name = "HttpError";
  }
}

/** A response, read whole. */
export class HttpResponse {
  constructor(
    readonly url: string,
    readonly status: number,
    /** Every header as received, names lower-case, in order. */
    readonly headerList: ReadonlyArray<readonly [string, string]>,
    readonly body: Uint8Array,
  ) {}

  /** Whether the status is 2xx. */
  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  /** A header's value (repeated ones joined with `, `), or undefined. */
  header(name: string): string | undefined {
    const wanted = name.toLowerCase();
    const values = this.headerList.filter(([n]) => n === wanted).map(([, v]) => v);
    return values.length > 0 ? values.join(", ") : undefined;
  }

  /** The headers as an object (repeated ones joined with `, `). */
  get headers(): Record<string, string> {
    const out: Record<string, string> = Object.create(null);
    for (const [name, value] of this.headerList) {
      out[name] = name in out ? `${out[name]}, ${value}` : value;
    }
    return out;
  }

  /** The body as UTF-8 text (an `HttpError` when it is not UTF-8). */
  text(): string {
    const text = utf8Decode(this.body);
    if (text === undefined) {
      throw new HttpError("body", this.url, "", `the response of ${this.url} is not UTF-8 text`);
    }
    return text;
  }

  /** The body parsed as JSON. */
  json(): unknown {
    return JSON.parse(this.text());
  }
}

/** Sends a request and reads the response whole. Blocks (a provider call is synchronous);
 * throws an `HttpError` on any failure — a status of 4xx or 5xx is a response, not a failure. */
export function request(url: string, init: HttpRequest = {}): HttpResponse {
  const method = (init.method ?? "GET").trim();
  const target = parseUrl(url);
  const fail = (code: string, why: string): HttpError =>
    new HttpError(code, url, target.host, `${method.toUpperCase()} ${url}: ${why}`);
  const timeoutMs = init.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  // At most 2^53 ns (104 days): a duration is a u64 that QuickJS passes as a number.
  if (!(timeoutMs > 0) || timeoutMs > 9e9) {
    throw fail("invalid-request", `timeoutMs must be a positive number of milliseconds, not ${timeoutMs}`);
  }
  const limit = init.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  if (!Number.isSafeInteger(limit) || limit < 0) {
    throw fail("invalid-request", `maxResponseBytes must be a whole number of bytes, not ${limit}`);
  }
  const body = init.body === undefined || init.body === null
    ? undefined
    : typeof init.body === "string" ? utf8Encode(init.body) : init.body;
  const headers = headerPairs(init.headers);
  if (body !== undefined && !headers.some(([n]) => n.toLowerCase() === "content-length")) {
    // A known length: otherwise the body goes chunked, which some servers refuse.
    headers.push(["content-length", String(body.length)]);
  }

  // The deadline of the whole exchange: every wait below is also a wait for it.
  const nanoseconds = Math.round(timeoutMs * 1e6);
  const deadline = subscribeDuration(nanoseconds);
  try {
    const wait = (pollable: Pollable, what: string): void => {
      const ready = poll([pollable, deadline]);
      if (!ready.includes(0)) throw fail("timeout", `timed out after ${timeoutMs} ms ${what}`);
    };
    const [future, outgoingBody] = send(target, method, headers, body !== undefined, timeoutMs, fail);
    let response: IncomingResponse;
    try {
      // The body goes out after `handle`, while the host sends: a large one would otherwise
      // wait for a reader that has not started. Should writing fail, the response (or the
      // error that ended the request, and with it the body's stream) is what is reported.
      if (body !== undefined && outgoingBody !== undefined) writeBody(outgoingBody, body, wait);
      const ready = future.subscribe();
      try {
        wait(ready, "waiting for the response");
      } finally {
        ready[Symbol.dispose]();
      }
      const result = future.get();
      if (result === null || result.tag === "err") {
        throw fail("internal-error", "the host gave no response");
      }
      if (result.val.tag === "err") {
        throw fail(result.val.val.tag, describe(result.val.val, target.host, timeoutMs));
      }
      response = result.val.val;
    } finally {
      future[Symbol.dispose]();
    }
    try {
      return readResponse(url, response, limit, wait, fail);
    } finally {
      response[Symbol.dispose]();
    }
  } finally {
    deadline[Symbol.dispose]();
  }
}

/** Makes the request and hands it to the host: the response to come, and the body to write
 * when there is one. */
function send(
  target: Target,
  method: string,
  headers: Array<[string, string]>,
  withBody: boolean,
  timeoutMs: number,
  fail: (code: string, why: string) => HttpError,
): [FutureIncomingResponse, OutgoingBody | undefined] {
  const nanoseconds = Math.round(timeoutMs * 1e6);
  // What is passed by value is the callee's from then on: each variable is cleared when its
  // resource is handed over, so that a failure drops only what is still the guest's.
  let fields: Fields | undefined;
  let outgoing: OutgoingRequest | undefined;
  let options: RequestOptions | undefined;
  let body: OutgoingBody | undefined;
  let handing = false;
  try {
    fields = makeFields(headers, fail);
    outgoing = new OutgoingRequest(fields);
    fields = undefined;
    outgoing.setMethod(methodOf(method));
    outgoing.setScheme({ tag: target.scheme === "https" ? "HTTPS" : "HTTP" });
    outgoing.setAuthority(target.authority);
    outgoing.setPathWithQuery(target.path);
    // A request without a body gets none at all (no empty chunked body).
    if (withBody) body = outgoing.body();
    options = new RequestOptions();
    // The host's own timeouts too, so that a stalled connection ends there as well (the
    // host may notice before the guest's deadline does: the same time, either way).
    options.setConnectTimeout(nanoseconds);
    options.setFirstByteTimeout(nanoseconds);
    options.setBetweenBytesTimeout(nanoseconds);
    const [request, requestOptions] = [outgoing, options];
    outgoing = options = undefined;
    handing = true;
    return [handle(request, requestOptions), body];
  } catch (e) {
    // The body is the request's child: it goes first.
    body?.[Symbol.dispose]();
    options?.[Symbol.dispose]();
    outgoing?.[Symbol.dispose]();
    fields?.[Symbol.dispose]();
    if (e instanceof HttpError) throw e;
    if (handing) throw fail(errorTag(e), describe(errorPayload(e), target.host, timeoutMs));
    throw fail("invalid-request", e instanceof Error ? e.message : String(e));
  }
}

/** `request` shaped like the web's `fetch`: the request is made when called (synchronously),
 * and the promise is already settled with its response or its `HttpError`. */
export function fetch(url: string, init?: HttpRequest): Promise<HttpResponse> {
  try {
    return Promise.resolve(request(url, init));
  } catch (e) {
    return Promise.reject(e);
  }
}

/** The SDK's HTTP functions, as one namespace (`http.request(url)`). */
export const http = { request, fetch, DEFAULT_TIMEOUT_MS, DEFAULT_MAX_RESPONSE_BYTES };

interface Target {
  scheme: "http" | "https";
  /** `host[:port]` as written. */
  authority: string;
  /** The host alone: a name or an address (IPv6 without brackets). */
  host: string;
  /** The path and query (`/` when empty). */
  path: string;
}

/** An absolute `http` or `https` URL, split (QuickJS has no `URL`). */
function parseUrl(url: string): Target {
  const invalid = (why: string) => new HttpError("invalid-url", url, "", `${url}: ${why}`);
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^#]*)/.exec(url);
  if (m === null) throw invalid("not an absolute http or https URL");
  const scheme = m[1].toLowerCase();
  if (scheme !== "http" && scheme !== "https") throw invalid(`the scheme ${scheme} is not http or https`);
  const authority = m[2];
  if (authority.includes("@")) {
    throw invalid("credentials in the URL are not supported (send an Authorization header)");
  }
  const hostPort = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(authority);
  if (hostPort === null || (hostPort[2] !== undefined && Number(hostPort[2]) > 65535)) {
    throw invalid(`${authority === "" ? "no host" : `the host ${authority} is not valid`}`);
  }
  const host = hostPort[1].replace(/^\[|\]$/g, "").toLowerCase();
  let path = m[3];
  if (path === "" || path.startsWith("?")) path = `/${path}`;
  if (/[\s\u0000-\u001f\u007f]/.test(path)) throw invalid("the path has spaces or control characters");
  return { scheme, authority, host, path };
}

function headerPairs(headers: HttpRequest["headers"]): Array<[string, string]> {
  if (headers === undefined) return [];
  return Array.isArray(headers)
    ? headers.map(([n, v]) => [n, v])
    : Object.entries(headers).map(([n, v]) => [n, String(v)]);
}

/** wasi:http fields of the headers; a header the host refuses is named. */
function makeFields(
  headers: Array<[string, string]>,
  fail: (code: string, why: string) => HttpError,
): Fields {
  const entries = (list: Array<[string, string]>): Array<[string, Uint8Array]> =>
    list.map(([n, v]) => [n.toLowerCase(), utf8Encode(v)]);
  try {
    return Fields.fromList(entries(headers));
  } catch (e) {
    // Which one: each alone (wasi:http says only why).
    for (const header of headers) {
      try {
        Fields.fromList(entries([header]))[Symbol.dispose]();
      } catch (one) {
        const why = errorTag(one) === "forbidden" ? "is the host's to set" : "is not a valid header";
        throw fail("invalid-request", `the header ${header[0]} ${why} (${errorTag(one)})`);
      }
    }
    throw fail("invalid-request", `the headers are not valid (${errorTag(e)})`);
  }
}

function methodOf(method: string): Method {
  const known = ["get", "head", "post", "put", "delete", "connect", "options", "trace", "patch"] as const;
  const lower = method.toLowerCase();
  for (const m of known) if (m === lower) return { tag: m };
  return { tag: "other", val: method };
}

/** Writes the whole body and finishes it. A failure is not thrown: the request's own outcome
 * (a response, or the error that ended the request and with it the body's stream) is what the
 * caller reports. */
function writeBody(
  body: OutgoingBody,
  bytes: Uint8Array,
  wait: (p: Pollable, what: string) => void,
): void {
  let stream: OutputStream | undefined;
  try {
    stream = body.write();
    let offset = 0;
    for (;;) {
      const room = stream.checkWrite();
      if (room === 0) {
        const ready = stream.subscribe();
        try {
          wait(ready, "sending the body");
        } finally {
          ready[Symbol.dispose]();
        }
        continue;
      }
      // Done when everything is written and the flush below has completed (check-write
      // reports no room until it has).
      if (offset === bytes.length) break;
      const n = Math.min(room, bytes.length - offset, 65536);
      stream.write(bytes.subarray(offset, offset + n));
      offset += n;
      if (offset === bytes.length) stream.flush();
    }
  } catch {
    stream?.[Symbol.dispose]();
    body[Symbol.dispose]();
    return;
  }
  // The stream is the body's child: it goes first.
  stream[Symbol.dispose]();
  try {
    OutgoingBody.finish(body, null);
  } catch {
    // Reported by the request's outcome (see above).
  }
}

/** Reads the status, the headers and at most `limit` bytes of body. */
function readResponse(
  url: string,
  response: IncomingResponse,
  limit: number,
  wait: (p: Pollable, what: string) => void,
  fail: (code: string, why: string) => HttpError,
): HttpResponse {
  const status = response.status();
  const fields = response.headers();
  let headerList: Array<[string, string]>;
  try {
    headerList = fields.entries().map(([n, v]) => [n.toLowerCase(), headerText(v)]);
  } finally {
    fields[Symbol.dispose]();
  }
  const body = response.consume();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let stream: InputStream | undefined;
  try {
    stream = body.stream();
    for (;;) {
      let chunk: Uint8Array;
      try {
        chunk = stream.read(65536);
      } catch (e) {
        if (errorTag(e) === "closed") break;
        throw fail("body", `reading the response failed (${errorTag(e)})`);
      }
      if (chunk.length === 0) {
        const ready = stream.subscribe();
        try {
          wait(ready, "reading the response");
        } finally {
          ready[Symbol.dispose]();
        }
        continue;
      }
      total += chunk.length;
      if (total > limit) {
        // Not read further: dropping the body closes the connection.
        throw fail("response-too-large", `the response body is larger than ${limit} bytes (maxResponseBytes)`);
      }
      chunks.push(chunk);
    }
  } catch (e) {
    stream?.[Symbol.dispose]();
    body[Symbol.dispose]();
    throw e;
  }
  stream[Symbol.dispose]();
  IncomingBody.finish(body)[Symbol.dispose]();
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  return new HttpResponse(url, status, headerList, bytes);
}

/** A header value as text: UTF-8, or byte per character when it is not (HTTP's own
 * ISO-8859-1). */
function headerText(bytes: Uint8Array): string {
  return utf8Decode(bytes) ?? String.fromCharCode(...bytes);
}

/** What a WIT error carries: the `E` of a `result<T, E>` function that threw. */
function errorPayload(e: unknown): unknown {
  if (e instanceof Error && "payload" in e) return (e as { payload: unknown }).payload;
  return e;
}

/** The case of a thrown WIT variant (`HTTP-request-denied`, `closed`), or the message. */
function errorTag(e: unknown): string {
  const payload = errorPayload(e);
  if (typeof payload === "object" && payload !== null && "tag" in payload) {
    return String((payload as { tag: unknown }).tag);
  }
  if (typeof payload === "string") return payload;
  return e instanceof Error ? e.message : String(e);
}

/** A wasi:http error code, said for people. */
function describe(payload: unknown, host: string, timeoutMs: number): string {
  const code = (typeof payload === "object" && payload !== null ? payload : { tag: String(payload) }) as ErrorCode;
  switch (code.tag) {
    case "HTTP-request-denied":
      // The host says where to grant it (it knows the package); the call fails with that.
      return `the host ${host} is not granted (HTTP-request-denied)`;
    case "destination-IP-prohibited":
      return `${host} is not a public internet address, which only an exact grant of this host allows (destination-IP-prohibited)`;
    case "DNS-timeout":
    case "DNS-error":
    case "destination-not-found":
      return `${host} could not be resolved (${code.tag})`;
    case "connection-refused":
      return `${host} refused the connection (connection-refused)`;
    case "connection-limit-reached":
      return `too many HTTP requests are open at once (connection-limit-reached)`;
    case "connection-timeout":
    case "connection-read-timeout":
    case "connection-write-timeout":
    case "HTTP-response-timeout":
      // The host's timeouts are the request's (see `send`): whichever notices first.
      return `timed out after ${timeoutMs} ms (${code.tag})`;
    case "internal-error":
      return `the host failed: ${String(code.val ?? "internal error")}`;
    default:
      return code.val === undefined || code.val === null
        ? code.tag
        : `${code.tag} ${JSON.stringify(code.val)}`;
  }
}
