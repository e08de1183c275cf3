"""The web app in a real browser (Debian's Chromium driven by Playwright) on a real
``cartagent serve``: a guest shops and pays through the sandbox's PayPal page, by mouse and by
keyboard alone; the merchant signs in, reads the panels and has an invoice made.

Screenshots of each key screen go to ``test-artifacts/screenshots/`` at the repository root.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from cartagent.child_process import free_port
from tests.web.test_serve import PRODUCTS, ServeProcess, needs_minilm

playwright = pytest.importorskip("playwright.sync_api")
CHROMIUM = shutil.which("chromium")
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None,
        reason="chromium is not installed (scripts/ensure-chromium.sh installs it)",
    ),
    needs_minilm,
]

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
SHOPPER_KEY = "e2e-shopper-key-0123456789abcdef"
MERCHANT_KEY = "e2e-merchant-key-0123456789abcdef"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Loopback only: any other host fails to resolve.
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]
WAIT_MS = 30_000  # every wait in the browser is bounded by this
MAX_TABS = 25

# Every input has a label (or aria-label), every button a name, every image an alt.
A11Y_PROBLEMS = """() => {
  const problems = [];
  const text = (node) => (node ? node.textContent.trim() : "");
  for (const input of document.querySelectorAll("input, textarea, select")) {
    if (input.type === "hidden") continue;
    const labels = [...(input.labels || [])].filter((l) => text(l) && l.offsetWidth > 0);
    const aria = (input.getAttribute("aria-label") || "").trim();
    const by = text(document.getElementById(input.getAttribute("aria-labelledby") || ""));
    if (!labels.length && !aria && !by) problems.push("no label: " + (input.id || input.name));
  }
  for (const button of document.querySelectorAll("button, [role=button], a.button")) {
    const name = (button.getAttribute("aria-label") || text(button)).trim();
    if (!name) problems.push("no name: button " + (button.id || button.className));
  }
  for (const image of document.querySelectorAll("img")) {
    if (!image.hasAttribute("alt")) problems.push("no alt: " + image.src);
  }
  return problems;
}"""


# WCAG 2.1 AA contrast (1.4.3) of every visible text: 4.5:1, or 3:1 for large text (24 px,
# or 18.66 px bold), against the first opaque background behind it. Disabled controls are exempt.
CONTRAST_PROBLEMS = """() => {
  const rgb = (text) => (text.match(/[\\d.]+/g) || []).map(Number);
  const luminance = ([r, g, b]) => {
    const channel = (v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
  };
  const background = (node) => {
    for (let at = node; at; at = at.parentElement) {
      const color = rgb(getComputedStyle(at).backgroundColor);
      if (color.length === 3 || (color.length === 4 && color[3] === 1)) return color.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const problems = [];
  for (const node of document.querySelectorAll("body *")) {
    const own = [...node.childNodes].some((c) => c.nodeType === 3 && c.textContent.trim());
    if (!own || node.closest("[disabled], .sr-only, .skip, dialog:not([open])")) continue;
    const style = getComputedStyle(node);
    if (style.visibility === "hidden" || node.getClientRects().length === 0) continue;
    const [fg, bg] = [luminance(rgb(style.color).slice(0, 3)), luminance(background(node))];
    const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) {
      const what = `${node.tagName.toLowerCase()}.${node.className}`;
      problems.push(`${what} "${node.textContent.trim().slice(0, 30)}": ${ratio.toFixed(2)}`);
    }
  }
  return problems;
}"""


# A 2 x 2 PNG, red.
TEE_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000002000000020802000000fdd49a73"
    "0000001049444154789c63f8cfc000440c100a001fee03fd8b5f14d40000000049454e44ae426082"
)


class WebAppServer(ServeProcess):
    """``cartagent serve`` with a keys file of our own and nothing of this shell's PayPal."""

    def environment(self) -> dict[str, str]:
        inherited = {k: v for k, v in os.environ.items() if not k.startswith("CARTAGENT_PAYPAL_")}
        return {**inherited, **self.env}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebAppServer]:
    folder = tmp_path_factory.mktemp("web-app")
    # The T-shirts have a picture file beside the catalog; the hoodies one on an image host
    # the browser cannot reach; the rest have none.
    (folder / "pictures").mkdir()
    (folder / "pictures" / "tee.png").write_bytes(TEE_PNG)
    pictures = {"T-Shirt": "pictures/tee.png", "Hoodie": "https://images.example.com/h.png"}
    products = [{**p, "image": pictures.get(p["title"])} for p in PRODUCTS]
    (folder / "products.json").write_text(json.dumps(products))
    keys = folder / "keys.toml"
    keys.write_text(
        f'[[keys]]\nkey = "{SHOPPER_KEY}"\nname = "sam"\nrole = "shopper"\n\n'
        f'[[keys]]\nkey = "{MERCHANT_KEY}"\nname = "mia"\nrole = "merchant"\n'
    )
    env = {
        "XDG_DATA_HOME": str(folder / "data"),
        "CARTAGENT_SANDBOX_DB": f"sqlite:///{folder / 'sandbox.db'}",
        "CARTAGENT_SANDBOX_HOST": "127.0.0.1",
        "CARTAGENT_SANDBOX_PORT": str(free_port()),
        "CARTAGENT_API_KEYS_FILE": str(keys),
        "HF_HUB_OFFLINE": "1",
    }
    process = WebAppServer(folder, env).start()
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with playwright.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS, timeout=WAIT_MS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser profile: no token, no session."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(WAIT_MS)
    context.set_default_navigation_timeout(WAIT_MS)
    yield context.new_page()
    context.close()


def script_errors(page: Any) -> list[str]:
    """Filled with the page's uncaught errors and Content-Security-Policy violations."""
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    def console(message: Any) -> None:
        if "Content Security Policy" in message.text:
            errors.append(message.text)

    page.on("console", console)
    return errors


def shot(page: Any, name: str) -> None:
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def ready(page: Any) -> None:
    page.wait_for_selector("body[data-ready=true]")
    assert page.evaluate(A11Y_PROBLEMS) == []
    assert page.evaluate(CONTRAST_PROBLEMS) == []


def reply_count(page: Any) -> int:
    return int(page.locator(".msg.assistant").count())


def wait_for_reply(page: Any, before: int) -> str:
    """The text of the assistant's next reply, once its turn (and the panels' refresh) is done."""
    page.wait_for_function(
        """(before) => document.querySelectorAll(".msg.assistant").length > before
             && !document.getElementById("composer").hasAttribute("aria-busy")""",
        arg=before,
    )
    problem = page.inner_text("#status")
    assert problem == "", problem
    return str(page.locator(".msg.assistant .text").last.inner_text())


def ask(page: Any, text: str) -> str:
    before = reply_count(page)
    page.fill("#message", text)
    page.click("#send")
    return wait_for_reply(page, before)


def type_and_enter(page: Any, text: str) -> str:
    before = reply_count(page)
    page.focus("#message")
    page.keyboard.type(text)
    page.keyboard.press("Enter")
    return wait_for_reply(page, before)


def tab_to(page: Any, selector: str, key: str = "Tab") -> None:
    """Press Tab (or Shift+Tab) until ``selector`` has the focus, at most MAX_TABS times."""
    for _ in range(MAX_TABS):
        if page.evaluate("(s) => document.activeElement?.matches(s) ?? false", selector):
            return
        page.keyboard.press(key)
    raise AssertionError(f"{selector} never got the focus in {MAX_TABS} presses of {key}")


def last_cards(page: Any) -> Any:
    return page.locator(".msg.assistant").last.locator(".card")


def test_a_guest_finds_adds_pays_on_paypal_and_sees_the_paid_order(
    server: WebAppServer, page: Any, browser: Any
) -> None:
    errors = script_errors(page)
    page.goto(f"{server.base_url}/shop")
    ready(page)
    assert page.evaluate("() => localStorage.getItem('cartagent.guestToken')").startswith("guest.")
    examples = page.locator("#welcome button.example")
    assert 4 <= examples.count() <= 6  # a welcome with requests made from this store
    shot(page, "0-welcome")

    assert "t-shirt" in ask(page, "a t-shirt").lower()
    assert last_cards(page).count() >= 2
    assert "Add to cart" in last_cards(page).first.inner_text()
    # Each card has a picture: the catalog's file for the T-shirts, loaded, not broken.
    picture = last_cards(page).first.locator("img.picture")
    assert picture.get_attribute("src").endswith("/image")
    # decode() waits for the file to arrive (reading naturalWidth at once raced the load) and
    # rejects a broken image.
    assert picture.evaluate("(img) => img.decode().then(() => img.naturalWidth, () => 0)") == 2
    ready(page)
    shot(page, "1-shop-with-cards")

    ask(page, "in red")
    red = last_cards(page)
    assert red.count() >= 1 and "red" in red.first.inner_text()
    before = reply_count(page)
    red.first.get_by_role("button", name="Add to cart").click()
    assert "Added 1 x T-Shirt (red, L, cotton)" in wait_for_reply(page, before)
    # The confirmation's card (if any) offers no second "Add to cart".
    confirmation = page.locator(".msg.assistant").last
    assert confirmation.get_by_role("button", name="Add to cart").count() == 0
    assert "T-Shirt (red, L, cotton)" in page.inner_text("#cart")
    assert page.inner_text("#cart-total") == "56.38 USD"
    shot(page, "2-cart")

    asked = ask(page, "checkout")
    assert "Approve the payment on PayPal" in asked
    assert "checkoutnow" not in asked and "\u201cPay with PayPal\u201d button" in asked
    pay = page.locator("#pay-with-paypal")
    assert pay.inner_text() == "Pay with PayPal"
    sandbox = f"http://127.0.0.1:{server.env['CARTAGENT_SANDBOX_PORT']}/checkoutnow?token="
    assert pay.get_attribute("href").startswith(sandbox)
    pay.click()
    page.wait_for_selector("#approve")
    assert page.url.startswith(sandbox) and "56.38 USD" in page.inner_text("body")
    shot(page, "3-paypal-page")
    page.click("#approve")

    page.wait_for_url(f"{server.base_url}/shop")
    confirm = page.locator("#confirm-payment")
    confirm.wait_for()
    ready(page)
    assert page.inner_text("#checkout").startswith(
        "Approved on PayPal — confirm payment of 56.38 USD"
    )
    assert "checkout" in page.inner_text("#log")  # the conversation came back
    before = reply_count(page)
    confirm.click()
    assert wait_for_reply(page, before).startswith("Paid. Receipt for order")
    assert "Receipt for order" in page.inner_text("#receipt")
    order_id = page.inner_text("#receipt").split()[3]
    assert "5.99 USD" in page.locator("#checkout dd").all_inner_texts()  # shipping, 46.66 < 50
    assert page.inner_text("#cart") == "Your cart is empty."
    shot(page, "4-receipt")

    where = ask(page, "where is my order")
    assert "paid" in where and "56.38 USD" in where
    orders = page.inner_text("#orders")
    assert "paid" in orders and "1 \u00d7 T-Shirt (red, L, cotton)" in orders  # what, not an id
    assert "Not shipped yet." in orders

    # The merchant ships it; the shopper's orders panel shows the parcel.
    with merchant_page(server, browser) as dashboard:
        shipped = ask(
            dashboard, f"order {order_id} shipped with UPS, tracking number 1Z999AA10123456784"
        )
        assert "1Z999AA10123456784" in shipped
    ask(page, "where is my order")
    assert "with UPS, tracking 1Z999AA10123456784: shipped" in page.inner_text("#orders")
    shot(page, "4b-orders-with-tracking")
    assert errors == []


@contextmanager
def merchant_page(server: WebAppServer, browser: Any) -> Iterator[Any]:
    """The merchant signed in on the dashboard, in a profile of its own."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(WAIT_MS)
    try:
        page = context.new_page()
        page.goto(f"{server.base_url}/login")
        page.fill("#key", MERCHANT_KEY)
        page.keyboard.press("Enter")
        page.wait_for_url(f"{server.base_url}/merchant")
        ready(page)
        yield page
    finally:
        context.close()


def test_a_welcome_example_is_one_click_from_results(server: WebAppServer, page: Any) -> None:
    errors = script_errors(page)
    page.goto(f"{server.base_url}/shop")
    ready(page)
    before = reply_count(page)
    page.locator("#welcome button.example", has_text="Show me").first.click()
    wait_for_reply(page, before)
    assert last_cards(page).count() >= 1
    assert errors == []


def test_a_slow_turn_shows_it_is_running_and_for_how_long(server: WebAppServer, page: Any) -> None:
    errors = script_errors(page)
    page.goto(f"{server.base_url}/shop")
    ready(page)
    page.evaluate(
        """() => {
             window.seen = [];
             const note = () => window.seen.push(
               document.getElementById("status").textContent
               + (document.querySelector(".msg.typing") ? " [typing]" : ""));
             new MutationObserver(note).observe(document.body, {subtree: true, childList: true,
                                                                characterData: true});
           }"""
    )

    def slow(route: Any) -> None:  # a model that takes its time before the first word
        time.sleep(3.5)
        route.continue_()

    page.route("**/messages/stream", slow)
    ask(page, "a t-shirt")
    seen = page.evaluate("() => window.seen")
    assert "The assistant is answering… 3 s [typing]" in seen
    assert page.locator(".msg.typing").count() == 0 and page.inner_text("#status") == ""
    assert errors == []


def test_a_picture_that_cannot_load_gives_way_to_the_drawing(
    server: WebAppServer, page: Any
) -> None:
    errors = script_errors(page)
    page.goto(f"{server.base_url}/shop")
    ready(page)
    ask(page, "a hoodie")
    picture = last_cards(page).first.locator("img.picture")
    page.wait_for_function(
        "(img) => img.getAttribute('src').startsWith('/static/icon-') && img.naturalWidth > 0",
        arg=picture.element_handle(),
    )
    assert errors == []


def test_near_misses_are_shown_apart_with_what_each_breaks(server: WebAppServer, page: Any) -> None:
    errors = script_errors(page)
    page.goto(f"{server.base_url}/shop")
    ready(page)
    assert ask(page, "a blue t-shirt under $50, not polyester").startswith("No exact match")
    near = last_cards(page).first
    assert "near" in near.get_attribute("class").split()
    assert "Not a match:" in near.inner_text() and "over your limit of 50 USD" in near.inner_text()
    ready(page)
    shot(page, "near-misses")
    assert errors == []


def test_a_guest_checks_out_with_the_keyboard_alone(server: WebAppServer, page: Any) -> None:
    errors = script_errors(page)
    page.goto(f"{server.base_url}/shop")
    ready(page)
    type_and_enter(page, "a t-shirt")
    type_and_enter(page, "in red")
    tab_to(page, ".msg.assistant:last-child .card button", key="Shift+Tab")
    before = reply_count(page)
    page.keyboard.press("Enter")
    assert "Added 1 x T-Shirt" in wait_for_reply(page, before)

    assert "Approve the payment on PayPal" in type_and_enter(page, "checkout")
    tab_to(page, "#pay-with-paypal")
    page.keyboard.press("Enter")
    page.wait_for_selector("#approve")
    tab_to(page, "#approve")
    page.keyboard.press("Enter")

    page.wait_for_url(f"{server.base_url}/shop")
    page.wait_for_selector("#confirm-payment")
    tab_to(page, "#confirm-payment")
    before = reply_count(page)
    page.keyboard.press("Enter")
    assert wait_for_reply(page, before).startswith("Paid. Receipt for order")
    assert page.inner_text("#cart") == "Your cart is empty."
    assert errors == []


def test_the_merchant_signs_in_reads_the_panels_and_has_an_invoice_made(
    server: WebAppServer, page: Any
) -> None:
    errors = script_errors(page)
    page.goto(f"{server.base_url}/merchant")
    page.wait_for_url(f"{server.base_url}/login")  # no key yet
    ready(page)
    page.fill("#key", SHOPPER_KEY)
    page.click("#sign-in")
    page.wait_for_function("() => document.getElementById('problem').textContent !== ''")
    assert page.inner_text("#problem") == "That key is a shopper's key, not the merchant's."

    page.fill("#key", MERCHANT_KEY)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{server.base_url}/merchant")
    ready(page)
    assert page.inner_text("#who") == "Signed in as mia"
    for panel in ("transactions", "invoices", "plans", "disputes"):
        assert "Could not load" not in page.inner_text(f"#{panel}")
    # The sales chart is drawn (a canvas from the vendored uPlot), its figures also in words.
    page.wait_for_selector("#sales-chart .uplot canvas")
    assert " sold and " in page.inner_text("#sales-summary")
    shot(page, "5-merchant-dashboard")
    # The transactions filter by type; each row says its type and the rows add up.
    page.select_option("#transaction-kind", "refund")
    page.wait_for_function(
        """() => {
             const types = [...document.querySelectorAll('#transactions tbody td:nth-child(2)')];
             const text = document.getElementById('transactions').textContent;
             return types.length ? types.every((cell) => cell.textContent === 'refund')
                                 : text.includes('of this kind');
           }"""
    )
    if page.locator("#transactions tbody tr").count():  # the seeded store has refunds
        assert "Refunds" in page.inner_text("#transactions .totals-line")
    page.select_option("#transaction-kind", "")

    text = ask(
        page,
        "Create an invoice for painting a house, $450, add 8% tax, 5% discount, due in 10 days",
    )
    assert "461.70 USD" in text
    assert "461.70 USD" in page.inner_text("#invoices")
    shot(page, "6-merchant-invoice")

    # A draft opens in a preview, line by line; it is sent from there.
    text = ask(page, "Draft an invoice for a garden fence, $200, add 8% tax, due in 5 days")
    assert "is ready and not sent" in text
    page.wait_for_selector("#invoice-preview[open]")
    assert page.inner_text("#preview-title").endswith("(draft, not sent yet)")
    lines = page.inner_text("#preview-body")
    assert "Garden fence" in lines and "216.00 USD" in lines and "8%" in lines
    assert page.evaluate(CONTRAST_PROBLEMS) == [] and page.evaluate(A11Y_PROBLEMS) == []
    shot(page, "6b-invoice-preview")
    page.click("#preview-send")
    page.wait_for_function(
        "() => document.getElementById('preview-status').textContent.startsWith('Sent')"
    )
    assert "The buyer pays it at http" in page.inner_text("#preview-body")
    assert page.is_hidden("#preview-send")
    shot(page, "6c-invoice-sent")
    link = page.locator("#preview-body .sent a").get_attribute("href")
    page.keyboard.press("Escape")
    page.wait_for_function("() => !document.getElementById('invoice-preview').open")
    assert errors == []

    # The buyer opens that link: the local sandbox's invoice page, which pays it.
    buyer = page.context.new_page()
    buyer.goto(link)
    buyer.wait_for_selector("#pay")
    assert "216.00 USD" in buyer.inner_text("body")
    shot(buyer, "6d-invoice-buyer-page")
    buyer.click("#pay")
    buyer.wait_for_function("() => document.getElementById('status').textContent.includes('PAID')")
    assert buyer.locator("#pay").count() == 0
    buyer.close()


def test_the_dashboard_works_with_the_keyboard_alone(server: WebAppServer, page: Any) -> None:
    errors = script_errors(page)
    page.goto(f"{server.base_url}/login")
    ready(page)
    page.focus("#key")
    page.keyboard.type(MERCHANT_KEY)
    page.keyboard.press("Enter")
    page.wait_for_url(f"{server.base_url}/merchant")
    ready(page)
    type_and_enter(page, "draft an invoice for a logo, $300, due in 7 days")
    page.wait_for_function("() => document.getElementById('invoice-preview').open")
    # The preview is a modal dialog: the focus is inside it and Escape closes it.
    assert page.evaluate(
        "() => document.getElementById('invoice-preview').contains(document.activeElement)"
    )
    page.keyboard.press("Escape")
    page.wait_for_function("() => !document.getElementById('invoice-preview').open")
    # Every control of the panels is reached with Tab: the filter, then an invoice's button.
    page.focus("#refresh")
    for control in ("#transaction-kind", "#transaction-start", "#transaction-end",
                    "#transaction-apply", "#invoices button"):  # fmt: skip
        tab_to(page, control)
    opener = page.evaluate("() => document.activeElement.getAttribute('aria-label')")
    assert opener.startswith(("Preview invoice #", "View invoice #"))
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('invoice-preview').open")
    page.keyboard.press("Escape")
    page.wait_for_function("() => !document.getElementById('invoice-preview').open")
    back = page.evaluate("() => document.activeElement.getAttribute('aria-label')")
    assert back == opener  # the focus goes back where it was
    assert errors == []


def test_the_api_docs_render_with_every_other_origin_blocked(
    server: WebAppServer, page: Any
) -> None:
    errors = script_errors(page)
    elsewhere: list[str] = []

    def same_origin_only(route: Any) -> None:
        if route.request.url.startswith(f"{server.base_url}/"):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    page.route("**/*", same_origin_only)
    page.goto(f"{server.base_url}/docs")
    page.wait_for_selector(".opblock")
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert {"/api", "/api/health", "/api/sessions", "/api/sessions/{session_id}/messages"} <= set(
        paths
    )
    page.get_by_role("button", name="Authorize").first.click()
    page.wait_for_selector("text=HTTPBearer")
    shot(page, "7-api-docs")
    assert elsewhere == [] and errors == []


def test_the_contrast_probe_finds_faint_text_and_spares_disabled_controls(
    server: WebAppServer, page: Any
) -> None:
    page.goto(f"{server.base_url}/login")
    ready(page)
    page.evaluate(
        """() => {
             const faint = document.createElement("p");
             faint.textContent = "faint";
             faint.style.color = "#aaaaaa";  // 2.3:1 on white
             const big = document.createElement("p");
             big.textContent = "big";
             big.style.cssText = "color: #888888; font-size: 30px";  // 3.5:1, large: passes
             const off = document.createElement("button");
             off.textContent = "off";
             off.disabled = true;
             document.querySelector("main").append(faint, big, off);
           }"""
    )
    assert page.evaluate(CONTRAST_PROBLEMS) == ['p. "faint": 2.32']


@contextmanager
def phone(browser: Any) -> Iterator[Any]:
    """A page in a fresh profile on a 390 x 844 phone screen."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    context.set_default_timeout(WAIT_MS)
    try:
        yield context.new_page()
    finally:
        context.close()


def test_on_a_390_px_phone_nothing_runs_off_the_screen(server: WebAppServer, browser: Any) -> None:
    with phone(browser) as page:
        errors = script_errors(page)
        page.goto(f"{server.base_url}/shop")
        ready(page)
        ask(page, "a t-shirt")
        assert last_cards(page).count() >= 1
        wide = page.evaluate("() => document.documentElement.scrollWidth")
        assert wide <= 390, f"the page is {wide} px wide on a 390 px screen"
        box = page.locator("#send").bounding_box()
        assert box is not None and box["x"] + box["width"] <= 390  # the Send button is reachable
        shot(page, "mobile-shop")
        assert errors == []


def test_the_dashboard_fits_a_390_px_phone(server: WebAppServer, browser: Any) -> None:
    with phone(browser) as page:
        errors = script_errors(page)
        page.goto(f"{server.base_url}/login")
        ready(page)
        page.fill("#key", MERCHANT_KEY)
        page.keyboard.press("Enter")
        page.wait_for_url(f"{server.base_url}/merchant")
        ready(page)
        page.wait_for_selector("#sales-chart .uplot canvas")
        wide = page.evaluate("() => document.documentElement.scrollWidth")
        assert wide <= 390, f"the dashboard is {wide} px wide on a 390 px screen"
        # The transactions table is wider than the phone: it scrolls in its panel, every
        # column reachable, instead of being cut off.
        scrolls = page.locator("#transactions").evaluate(
            "(box) => getComputedStyle(box.closest('.panel')).overflowX"
        )
        assert scrolls == "auto"
        shot(page, "mobile-dashboard")
        assert errors == []
