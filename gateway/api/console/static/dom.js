// DOM helpers. Data is only ever put in the page as text (textContent, attribute values),
// never parsed as markup: a memory such as <img src=x onerror=...> shows as those characters.

/** h("td", {class: "num", onclick: fn}, "text", childNode, [more]) -> an element. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") el.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(el.dataset, value);
    else if (name === "style") Object.assign(el.style, value); // CSSOM: allowed by the CSP, unlike style=""
    else if (name === "value") el.value = value;
    else if (name === "checked") el.checked = Boolean(value);
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replace the children of `el`. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A table: columns [{title, cls}], rows of cells (text or nodes). */
export function table(columns, rows, attrs = {}) {
  return h("table", attrs,
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", {class: c.cls}, c.title)))),
    h("tbody", {}, rows));
}

export function fmtTime(value) {
  if (value === null || value === undefined || value === "") return "";
  const date = typeof value === "number" ? new Date(value * 1000) : new Date(value);
  return isNaN(date) ? String(value) : date.toISOString().replace("T", " ").slice(0, 19) + "Z";
}

export function fmtNum(value, digits = 3) {
  return value === null || value === undefined ? "–" : Number(value).toFixed(digits).replace(/\.?0+$/, "") || "0";
}

export function pretty(value) {
  return JSON.stringify(value, null, 2);
}
