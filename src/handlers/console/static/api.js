// The service's JSON API, with the person's key. The key lives in sessionStorage (gone with the tab), never in a URL;
// every read says `Prefer: no-stamp`, so looking at a memory is not counted as an agent using it.

import { app, notify } from "./dom.js";

const KEY_STORE = "agent-memory-key";
const RETRIES = 5;

export const key = () => sessionStorage.getItem(KEY_STORE);

export function setKey(value) {
  if (value) sessionStorage.setItem(KEY_STORE, value);
  else sessionStorage.removeItem(KEY_STORE);
  app.me = null;
}

// What the key may do (its scopes, from GET /key).
export const can = (scope) => Boolean(app.me?.scopes.includes(scope));

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || `HTTP ${status}`);
    this.status = status;
    this.problem = problem || {};
  }
}

const HUMAN = {
  401: "This key is not valid (expired or revoked?). Paste another key.",
  403: "This key may not do this: ask for a key with the scope it needs.",
};

function headersFor(method, body, ifMatch) {
  const headers = { Authorization: `Bearer ${key()}`, Accept: "application/json" };
  if (method === "GET") headers.Prefer = "no-stamp";
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (ifMatch !== undefined) headers["If-Match"] = `"${ifMatch}"`;
  return headers;
}

export async function api(method, path, { body, ifMatch, quiet = false } = {}) {
  const headers = headersFor(method, body, ifMatch);
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
      credentials: "omit",
    });
    if (response.status === 503 && attempt < RETRIES) {
      const wait = Math.min(Number(response.headers.get("Retry-After")) || 1, 30);
      if (!quiet) notify(`Storage is busy, retrying in ${wait} s…`, "error");
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
      continue;
    }
    if (response.status === 503 && !quiet) notify("Storage is busy: it did not answer after several tries. Try again soon.", "error");
    else if (attempt > 1 && !quiet) notify("");
    const text = response.status === 204 ? "" : await response.text();
    const json = text ? JSON.parse(text) : null;
    if (response.ok) return { json, etag: response.headers.get("ETag") };
    if (response.status === 401) {
      setKey(null);
      notify(HUMAN[401], "error");
      app.route();
    } else if (response.status === 403 && !quiet) {
      notify(HUMAN[403], "error");
    }
    throw new ApiError(response.status, json);
  }
}

export function failed(error) {
  if (!(error instanceof ApiError)) {
    notify(`Something went wrong: ${error.message}`, "error");
  } else if (![401, 403, 503].includes(error.status)) {
    notify(error.message, "error");
  }
}
