// The console's entry point: login, hash routing (#users, #memories...), status line.
import {api, ApiError, session} from "./api.js";
import {pages} from "./pages.js";
import {guarded, say} from "./ui.js";

const built = new Set();

function showPage(name) {
  for (const section of document.querySelectorAll("section.page")) section.hidden = true;
  const page = pages[name] ? name : "users";
  for (const a of document.querySelectorAll("#nav a")) a.classList.toggle("active", a.dataset.page === page);
  const section = document.getElementById("page-" + page);
  section.hidden = false;
  if (!built.has(page)) { pages[page].build(section); built.add(page); }
  say("");
  guarded(() => pages[page].load(section));
}

function route() {
  if (!session.key) {
    for (const section of document.querySelectorAll("section.page")) section.hidden = section.id !== "login";
    document.getElementById("nav").hidden = true;
    document.getElementById("admin-key").focus();
    return;
  }
  document.getElementById("nav").hidden = false;
  document.getElementById("login").hidden = true;
  showPage((location.hash || "#users").slice(1));
}

function logout(message) {
  session.key = null;
  route();
  say(message || "Logged out.", Boolean(message));
}

document.getElementById("login-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const input = document.getElementById("admin-key");
  session.key = input.value.trim();
  try {
    await api("GET", "/v1/admin/users", {params: {limit: 1}});
  } catch (err) {
    session.key = null;
    say(err instanceof ApiError && err.status === 403 ? "This key is not an admin key." :
      err instanceof ApiError && err.status === 401 ? "Unknown key." : String(err.message || err), true);
    return;
  }
  input.value = "";
  route();
});
document.getElementById("logout").addEventListener("click", () => logout());
window.addEventListener("hashchange", route);
window.addEventListener("memgate:logout", (event) => logout(event.detail));
route();
