// An HTTP-calling provider in TypeScript: its one resource, `tshttp:index:Fetch`, makes the
// request its inputs describe through the SDK (`http.request`, or an awaited `fetch`) when it
// is created, and records the response. tests/e2e/typescript_sdk.rs points it at a server of
// its own on 127.0.0.1: a granted host answers, a host the user did not grant is refused, a
// response larger than the limit is cut off, and a slow one times out.
//
// The manifest requests 127.0.0.1 and localhost; the test grants only 127.0.0.1 (at its
// server's port), so that localhost is a host the provider asked for and was refused.

import {
  type CreateRequest,
  type CreateResult,
  type HttpRequest,
  type HttpResponse,
  Provider,
  ProviderError,
  UNKNOWN,
  type UpdateResult,
  fetch,
  getNumber,
  getString,
  http,
} from "cairn-sdk";

function result(url: string, response: HttpResponse): CreateResult {
  return {
    id: url,
    outputs: {
      status: response.status,
      body: response.text(),
      servedBy: response.header("x-served-by") ?? "",
      length: response.body.length,
    },
  };
}

class Fetch extends Provider {
  override replaceOnChange(): string[] {
    return ["*"];
  }

  override previewCreate(r: CreateRequest): CreateResult {
    return {
      id: "",
      outputs: { status: UNKNOWN, body: UNKNOWN, servedBy: UNKNOWN, length: UNKNOWN, url: r.inputs.url ?? null },
    };
  }

  create(r: CreateRequest): CreateResult | Promise<CreateResult> {
    const url = getString(r.inputs, "url") ?? "";
    const body = getString(r.inputs, "body");
    const init: HttpRequest = {
      method: getString(r.inputs, "method") ?? "GET",
      headers: { "x-cairn-test": "from TypeScript" },
      body: body === "" ? undefined : body,
      maxResponseBytes: getNumber(r.inputs, "maxResponseBytes"),
      timeoutMs: getNumber(r.inputs, "timeoutMs"),
    };
    switch (getString(r.inputs, "via") ?? "request") {
      case "request":
        return result(url, http.request(url, init));
      case "fetch":
        return (async () => result(url, await fetch(url, init)))();
      default:
        throw ProviderError.failed(`unknown via ${JSON.stringify(r.inputs.via)}`);
    }
  }

  update(): UpdateResult {
    throw ProviderError.failed("requests are replaced, never updated");
  }

  delete(): void {}
}

export default new Fetch();
