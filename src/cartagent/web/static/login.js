// Merchant sign-in: the key is checked against the API, then kept in this tab's sessionStorage.
import { ApiError, MERCHANT_KEY, callApi } from "./chat.js";

const form = document.getElementById("login");
const input = document.getElementById("key");
const problem = document.getElementById("problem");

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const key = input.value.trim();
  problem.textContent = "";
  try {
    await callApi("/api/merchant/overview", { token: key });
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      problem.textContent = "That key is not valid.";
    } else if (error instanceof ApiError && error.status === 403) {
      problem.textContent = "That key is a shopper's key, not the merchant's.";
    } else {
      problem.textContent = `Could not sign in: ${error.detail || error.message}`;
    }
    input.focus();
    return;
  }
  sessionStorage.setItem(MERCHANT_KEY, key);
  window.location.assign("/merchant");
});
document.body.dataset.ready = "true";
