// The live feed: new audit events as the server sends them (server-sent events). Text only:
// every value goes in through textContent, never as markup.
"use strict";
(function () {
  const list = document.getElementById("feed");
  if (!list || !window.EventSource) return;
  const project = new URLSearchParams(list.dataset.src.split("?")[1] || "").get("project");
  const source = new EventSource(list.dataset.src);
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
  };
})();
