// The admin API client: the key lives in sessionStorage (this tab only) and goes out as
// Authorization: Bearer. Errors come back in the OpenAI envelope; ApiError carries them.
const STORAGE = "memgate.adminKey";

export class ApiError extends Error {
  constructor(status, envelope) {
    const error = (envelope && envelope.error) || {};
    super(error.message || `HTTP ${status}`);
    this.status = status;
    this.param = error.param || null;
  }
}

export const session = {
  get key() { return sessionStorage.getItem(STORAGE); },
  set key(value) { value ? sessionStorage.setItem(STORAGE, value) : sessionStorage.removeItem(STORAGE); },
};

/** Query string from an object, skipping empty values. */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v !== undefined && v !== null && v !== "") q.set(k, v);
  const text = q.toString();
  return text ? "?" + text : "";
}

/** fetch with the admin key; JSON in and out (text when asked). */
export async function api(method, path, {body, params, raw, text} = {}) {
  const headers = {authorization: "Bearer " + (session.key || "")};
  let payload;
  if (raw !== undefined) { payload = raw; headers["content-type"] = "application/x-ndjson"; }
  else if (body !== undefined) { payload = JSON.stringify(body); headers["content-type"] = "application/json"; }
  const response = await fetch(path + query(params), {method, headers, body: payload, cache: "no-store"});
  if (!response.ok) {
    let envelope = null;
    try { envelope = await response.json(); } catch (_) { /* not JSON */ }
    throw new ApiError(response.status, envelope);
  }
  if (response.status === 204) return null;
  return text ? response.text() : response.json();
}

/** "/v1/admin/users/{id}/action" with the id percent-encoded (ids may hold "/"). */
export function userPath(userId, action) {
  return `/v1/admin/users/${encodeURIComponent(userId)}/${action}`;
}
