// The live corner: new audit events as the server sends them (server-sent events), in a
// pill that stays out of the page's way, and the page's own numbers and lists (each region
// marked data-live) drawn again after them. Text only: every value goes in through
// textContent, never as markup; a region is replaced only by the server's own rendering.
"use strict";
(function () {
  const list = document.getElementById("feed");
  if (!list || !window.EventSource) return;
  const corner = document.getElementById("live");
  const count = document.getElementById("feed-count");
  const project = new URLSearchParams(list.dataset.src.split("?")[1] || "").get("project");
  const source = new EventSource(list.dataset.src);
  let unseen = 0;
  let redraw = null;

  corner.addEventListener("toggle", function () {
    if (corner.open) {
      unseen = 0;
      count.hidden = true;
    }
  });

  source.onmessage = function (message) {
    const event = JSON.parse(message.data);
    const item = document.createElement("li");
    const when = document.createElement("time");
    when.dateTime = event.at;
    when.textContent = event.at.slice(11, 19);
    item.appendChild(when);
    item.appendChild(document.createTextNode(" " + event.op + " "));
    if (event.memory_id) {
      const link = document.createElement("a");
      link.href = "/memories/" + encodeURIComponent(event.memory_id) +
        (project ? "?project=" + encodeURIComponent(project) : "");
      // what the memory is, not its id: two writes of one batch share the id's time part
      link.textContent = event.title || event.memory_id;
      if (event.type) {
        const kind = document.createElement("span");
        kind.className = "type type-" + event.type;
        kind.textContent = event.type;
        item.appendChild(kind);
        item.appendChild(document.createTextNode(" "));
      }
      item.appendChild(link);
    }
    if (event.actor) item.appendChild(document.createTextNode(" by " + event.actor));
    list.insertBefore(item, list.firstChild);
    while (list.children.length > 50) list.removeChild(list.lastChild);
    const empty = document.getElementById("feed-empty");
    if (empty) empty.remove();
    if (!corner.open) {
      unseen += 1;
      count.textContent = String(unseen);
      count.hidden = false;
    }
    // a batch of writes is one redraw, a second after the last of them
    if (document.querySelector("[data-live]")) {
      clearTimeout(redraw);
      redraw = setTimeout(refresh, 1000);
    }
  };

  // Draw the page again on the server and take its live regions; a region being worked in
  // (focus inside, a box ticked, a fold opened) stays as it is.
  function refresh() {
    fetch(location.href, { credentials: "same-origin", headers: { "accept": "text/html" } })
      .then(function (answer) { return answer.ok ? answer.text() : null; })
      .then(function (text) {
        if (text === null) return;
        const fresh = new DOMParser().parseFromString(text, "text/html");
        document.querySelectorAll("[data-live]").forEach(function (region) {
          if (busy(region)) return;
          const next = fresh.getElementById(region.id);
          if (next) region.replaceWith(document.adoptNode(next));
        });
      })
      .catch(function () { /* the next event tries again */ });
  }

  function busy(region) {
    return region.contains(document.activeElement) && document.activeElement !== document.body ||
      region.querySelector("input:checked, details[open]") !== null;
  }
})();
