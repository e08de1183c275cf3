// The merchant's dashboard: read-only panels from the payment backend beside the
// back-office assistant; the panels are read again after every turn.
import { ApiError, Chat, MERCHANT_KEY, callApi, el, money } from "./chat.js";

const SESSION = "cartagent.merchantSession";
const $ = (id) => document.getElementById(id);
const key = sessionStorage.getItem(MERCHANT_KEY);
let sessionId = null;

function signOut() {
  sessionStorage.removeItem(MERCHANT_KEY);
  sessionStorage.removeItem(SESSION);
  window.location.replace("/login");
}

function table(caption, columns, rows) {
  return el(
    "table",
    {},
    el("caption", { className: "sr-only", text: caption }),
    el("thead", {}, el("tr", {}, ...columns.map((c) => el("th", { text: c, attrs: { scope: "col" } })))),
    el(
      "tbody",
      {},
      ...rows.map((row) => el("tr", {}, ...row.map((cell) => el("td", { text: cell ?? "" })))),
    ),
  );
}

const TRANSACTION_STATUS = { S: "completed", P: "pending", V: "reversed", D: "denied" };

const PANELS = {
  transactions: {
    caption: "Transactions",
    columns: ["Date", "Type", "Transaction", "Order", "Status", "Amount"],
    query: () => {
      const kind = $("transaction-kind").value;
      return kind ? `?kind=${encodeURIComponent(kind)}` : "";
    },
    rows: (body) =>
      body.transactions.map((t) => [
        (t.date || "").slice(0, 10),
        t.type,
        t.id,
        t.paypal_reference_id,
        TRANSACTION_STATUS[t.status] || t.status,
        money(t.amount, t.currency),
      ]),
    // What the rows add up to, per currency: in, back out, fees, net.
    after: (body) =>
      Object.entries(body.totals || {}).map(([currency, t]) =>
        el("p", {
          className: "totals-line",
          text:
            `Payments ${money(t.payments, currency)} · Refunds ${money(t.refunds, currency)} · ` +
            `Fees ${money(t.fees, currency)} · Net ${money(t.net, currency)}`,
        }),
      ),
    empty: "No transactions of this kind in the last 31 days.",
  },
  invoices: {
    caption: "Invoices",
    columns: ["Number", "Status", "Total", "Due", "Recipient"],
    rows: (body) =>
      body.invoices.map((i) => [i.number, i.status, money(i.total, i.currency), i.due_date, i.recipient]),
    empty: "No invoices yet.",
  },
  plans: {
    caption: "Subscription plans",
    columns: ["Plan", "Status", "Price", "Every"],
    rows: (body) =>
      body.plans.map((p) => {
        const cycles = p.billing_cycles || [];
        const regular = cycles.find((c) => c.tenure === "REGULAR") || cycles[cycles.length - 1] || {};
        return [p.name, p.status, money(regular.price, regular.currency), regular.every];
      }),
    empty: "No subscription plans yet.",
  },
  disputes: {
    caption: "Disputes",
    columns: ["Dispute", "Reason", "Status", "Amount", "Respond by"],
    rows: (body) =>
      body.disputes.map((d) => [
        d.dispute_id,
        d.reason,
        d.status,
        money(d.amount, d.currency),
        (d.seller_response_due_date || "").slice(0, 10),
      ]),
    empty: "No disputes.",
  },
};

async function loadPanel(name) {
  const panel = PANELS[name];
  const box = $(name);
  box.setAttribute("aria-busy", "true");
  try {
    const query = panel.query ? panel.query() : "";
    const body = await callApi(`/api/merchant/${name}${query}`, { token: key });
    const rows = panel.rows(body);
    box.replaceChildren(
      rows.length ? table(panel.caption, panel.columns, rows) : el("p", { className: "empty", text: panel.empty }),
      ...(rows.length && panel.after ? panel.after(body) : []),
    );
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) signOut();
    box.replaceChildren(
      el("p", { className: "status problem", text: `Could not load: ${error.detail || error.message}` }),
    );
  } finally {
    box.removeAttribute("aria-busy");
  }
}

// The daily sales and refunds of the last 31 days as a chart (uPlot, vendored), with its
// figures in words for those who do not see it.
let salesChart = null;

async function loadSales() {
  const box = $("sales-chart");
  const summary = $("sales-summary");
  let body;
  try {
    body = await callApi("/api/merchant/sales", { token: key });
  } catch (error) {
    summary.textContent = `Could not load: ${error.detail || error.message}`;
    return;
  }
  const sales = body.sales.map(Number);
  const refunds = body.refunds.map(Number);
  const total = (values) => values.reduce((sum, value) => sum + value, 0);
  const sold = total(sales);
  const back = total(refunds);
  const best = sales.indexOf(Math.max(...sales, 0));
  summary.textContent = body.days.length
    ? `${money(sold.toFixed(2), body.currency)} sold and ${money(back.toFixed(2), body.currency)} ` +
      `refunded from ${body.days[0]} to ${body.days[body.days.length - 1]}` +
      (sold > 0 ? `; the best day was ${body.days[best]} (${money(sales[best].toFixed(2), body.currency)}).` : ".")
    : "No transactions in the last 31 days.";
  if (salesChart) salesChart.destroy();
  salesChart = null;
  if (!body.days.length || typeof window.uPlot !== "function") return;
  const times = body.days.map((day) => Date.parse(`${day}T00:00:00Z`) / 1000);
  const width = Math.max(280, box.clientWidth || 480);
  salesChart = new window.uPlot(
    {
      width,
      height: 220,
      series: [
        {},
        { label: `Sales (${body.currency})`, stroke: "#0b5cad", width: 2, fill: "rgba(11,92,173,0.08)" },
        { label: `Refunds (${body.currency})`, stroke: "#b3261e", width: 2 },
      ],
      axes: [{}, { size: 70 }],
    },
    [times, sales, refunds],
    box,
  );
}

function refreshPanels() {
  return Promise.all([...Object.keys(PANELS).map(loadPanel), loadSales()]);
}

const chat = new Chat({
  log: $("log"),
  form: $("composer"),
  input: $("message"),
  status: $("status"),
  token: () => key,
  session: () => sessionId,
  onReply: () => refreshPanels(),
});

async function start() {
  if (!key) {
    window.location.replace("/login");
    return;
  }
  let who;
  try {
    who = await callApi("/api/merchant/overview", { token: key });
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      signOut();
      return;
    }
    throw error;
  }
  $("who").textContent = `Signed in as ${who.name}` + (who.payments ? "" : " (payments are not configured)");
  $("sign-out").addEventListener("click", signOut);
  $("refresh").addEventListener("click", () => refreshPanels());
  $("transaction-kind").addEventListener("change", () => loadPanel("transactions"));
  const panels = refreshPanels();
  const wanted = sessionStorage.getItem(SESSION);
  let history = { messages: [] };
  sessionId = null;
  if (wanted) {
    try {
      history = await callApi(`/api/sessions/${encodeURIComponent(wanted)}/messages`, { token: key });
      sessionId = wanted;
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 404) throw error;
    }
  }
  if (!sessionId) {
    sessionId = (await callApi("/api/sessions", { method: "POST", token: key })).id;
    sessionStorage.setItem(SESSION, sessionId);
  }
  chat.showHistory(history.messages);
  await panels;
  document.body.dataset.ready = "true";
}

start().catch((error) => chat.setStatus(`The dashboard could not start: ${error.detail || error.message}`, true));
