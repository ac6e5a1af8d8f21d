// Status line, error reporting and navigation shared by every page.
import {ApiError} from "./api.js";

/** The user and friend picked on one page, carried to the next. */
export const selection = {user: "", friend: ""};

export function say(message, error = false) {
  const status = document.getElementById("status");
  status.textContent = message || "";
  status.className = error ? "error" : "";
}

/** Run an async action, reporting failures in the status line (a 401 logs out). */
export async function guarded(action) {
  try {
    return await action();
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      window.dispatchEvent(new CustomEvent("memgate:logout", {detail: "The key was refused (401): log in again."}));
      return undefined;
    }
    say(err instanceof ApiError ? `${err.status}: ${err.message}` : String(err), true);
    return undefined;
  }
}

/** Show a page (reloads it when it is already shown). */
export function go(page) {
  if (location.hash === "#" + page) window.dispatchEvent(new HashChangeEvent("hashchange"));
  else location.hash = "#" + page;
}

/** A button that asks once more before acting: the first click arms it for 5 s. */
export function confirmButton(label, confirmLabel, action, attrs = {}) {
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = label;
  button.className = attrs.class || "danger";
  if (attrs.name) button.dataset.action = attrs.name;
  let armed = null;
  button.addEventListener("click", () => {
    if (armed === null) {
      button.textContent = confirmLabel;
      button.dataset.armed = "1";
      armed = setTimeout(() => { armed = null; button.textContent = label; delete button.dataset.armed; }, 5000);
      return;
    }
    clearTimeout(armed);
    armed = null;
    delete button.dataset.armed;
    button.textContent = label;
    action();
  });
  return button;
}
