"""The console in a real browser (Debian's chromium through Selenium), run by ConsoleBrowserTests.

Environment: CONSOLE_URL, CONSOLE_USER (a viewer), CONSOLE_PASSWORD, OPERATOR_USER (an operator, same
password), TICKET (a granted ticket), TRANSACTION (its transaction id), XSS_USER (a user id written to look like markup), HELD_UNIT
(a held purchase), DEAD_TICKET (a ticket dead for retries_exhausted, whose replay grants it),
REDIS_URL and DEAD_KEY (where a new dead letter is pushed while the overview is open), SHOTS (a
folder for screenshots). Exits 0 when every check
held; prints each failure otherwise.
"""

import http.server
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.parse

os.environ["SE_OFFLINE"] = "true"  # never download a driver: Debian's chromium-driver is given
from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import NoAlertPresentException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.common.exceptions import TimeoutException, WebDriverException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

BASE = os.environ["CONSOLE_URL"]
USER, PASSWORD, OPERATOR = os.environ["CONSOLE_USER"], os.environ["CONSOLE_PASSWORD"], os.environ["OPERATOR_USER"]
HELD_UNIT, DEAD_TICKET = os.environ["HELD_UNIT"], os.environ["DEAD_TICKET"]
TICKET, XSS_USER, TRANSACTION = os.environ["TICKET"], os.environ["XSS_USER"], os.environ["TRANSACTION"]
SHOTS = os.environ.get("SHOTS", "/tmp")
failures = []


STARTED = time.monotonic()


def check(condition, what):
    print("%5.1fs %s %s" % (time.monotonic() - STARTED, "ok  " if condition else "FAIL", what), flush=True)
    if not condition:
        failures.append(what)


def browser(javascript=True):
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(argument)
    if not javascript:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)


def wait(driver):
    """Thirty seconds of polling that outlasts a page being replaced: chromedriver reports an element
    read while its document goes away as an "unknown error" ("Node with given id does not belong to
    the document"), not as a stale element, so every WebDriverException is polled again."""
    return WebDriverWait(driver, 30, ignored_exceptions=(WebDriverException,))


def press(driver, element, act=lambda element: element.click()):
    """Clicks `element` (or submits it: `act`) and waits until the page it was on has gone, so that
    what is read next is the page this led to (the old page's h1 may hold the same words: "Held
    purchases" before "Held purchase ...")."""
    old = driver.find_element(By.TAG_NAME, "html")
    act(element)

    def gone(_):
        try:
            old.is_enabled()
            return False
        except WebDriverException:  # stale, or chromedriver's "does not belong to the document"
            return True
    wait(driver).until(gone)


def heading(driver, text):
    """Waits (the navigation a click started) until the page's h1 says `text`."""
    try:
        wait(driver).until(expected_conditions.text_to_be_present_in_element((By.TAG_NAME, "h1"), text))
        return True
    except TimeoutException:
        return False


def arrived(driver, path):
    try:
        wait(driver).until(lambda d: urllib.parse.urlparse(d.current_url).path == path)
        return True
    except TimeoutException:
        return False


def sign_in(driver, user=USER):
    driver.get(BASE + "/")
    check(arrived(driver, "/login"), "a page without a session sends to /login")
    driver.find_element(By.NAME, "username").send_keys(user)
    driver.find_element(By.NAME, "password").send_keys(PASSWORD)
    press(driver, driver.find_element(By.CSS_SELECTOR, "form.login button"))
    check(heading(driver, "Overview"), "signed in, the overview")


def no_alert(driver, what):
    try:
        driver.switch_to.alert
        check(False, what + ": no alert")
    except NoAlertPresentException:
        check(True, what + ": no alert")


def main():
    driver = browser()
    try:
        sign_in(driver)
        check("verify" in driver.find_element(By.CSS_SELECTOR, "table.stages").text, "the overview lists the stages")
        driver.save_screenshot(os.path.join(SHOTS, "console-overview.png"))

        # The counters are live: a dead letter arrives and the open overview shows it, no reload.
        cell = driver.find_element(By.CSS_SELECTOR, 'dd[data-count="dead"]')
        before = int(cell.text)
        subprocess.run(["redis-cli", "-u", os.environ["REDIS_URL"], "LPUSH", os.environ["DEAD_KEY"],
                        '{"attempts":1,"at":1795000000000,"error":"live","job":"{}","reason":"live","stage":"grant","ticket":"t-live"}'],
                       check=True, capture_output=True)
        try:
            wait(driver).until(lambda d: d.find_element(By.CSS_SELECTOR, 'dd[data-count="dead"]').text == str(before + 1))
            check(True, "the overview's counters refresh by themselves")
        except TimeoutException:
            check(False, "the overview's counters refresh by themselves (still %s)" % cell.text)
        errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        check(not errors, "the live counters raise no error or CSP violation: %s" % errors)

        box = driver.find_element(By.NAME, "q")
        box.send_keys(TICKET)
        press(driver, box, lambda box: box.submit())
        press(driver, wait(driver).until(expected_conditions.element_to_be_clickable((By.LINK_TEXT, "ticket " + TICKET))))
        check(heading(driver, "Ticket " + TICKET) and "granted" in driver.find_element(By.CSS_SELECTOR, "dl.fields").text, "the ticket's page says granted")
        driver.save_screenshot(os.path.join(SHOTS, "console-ticket.png"))

        box = driver.find_element(By.NAME, "q")
        box.send_keys(TRANSACTION)
        press(driver, box, lambda box: box.submit())
        press(driver, wait(driver).until(expected_conditions.element_to_be_clickable((By.LINK_TEXT, "purchase " + TRANSACTION))))
        check(heading(driver, "Purchase " + TRANSACTION), "search by transaction id leads to the purchase")
        story = driver.find_element(By.CSS_SELECTOR, "ol.timeline").text
        check("submitted" in story and "granted" in story and XSS_USER in story, "its story: submitted, granted, to the user (as text)")
        no_alert(driver, "a purchase whose user id is written as markup")
        driver.save_screenshot(os.path.join(SHOTS, "console-purchase.png"))

        driver.get(BASE + "/held")
        check(heading(driver, "Held purchases") and not driver.find_elements(By.CSS_SELECTOR, "form.decide"),
              "a viewer sees the held purchases and no form to decide them")

        driver.get(BASE + "/users/" + urllib.parse.quote(XSS_USER, safe=""))
        no_alert(driver, "a user id written as markup")
        check(XSS_USER in driver.find_element(By.TAG_NAME, "h1").text, "the user id is shown as text")
        check(not driver.find_elements(By.CSS_SELECTOR, "main script, main img"), "no element came from data")
        errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        check(not errors, "no script error or CSP violation: %s" % errors)
        driver.save_screenshot(os.path.join(SHOTS, "console-user.png"))

        # Another origin on the same site (the cookie goes along; only the origin check stops it).
        attack = ('<form id="f" method="post" action="%s/logout"></form>'
                  '<script>document.getElementById("f").submit()</script>' % BASE)

        class Page(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.end_headers()
                self.wfile.write(attack.encode())

            def log_message(self, *args):
                pass

        # Threads: chromium opens spare connections that a one-at-a-time server would wait on.
        with http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page) as server:
            threading.Thread(target=server.serve_forever, daemon=True).start()
            driver.get("http://127.0.0.1:%d/" % server.server_address[1])
            check(arrived(driver, "/logout") and "refused" in driver.page_source, "the forged sign-out was refused")
            server.shutdown()
        driver.get(BASE + "/")
        check(heading(driver, "Overview"), "a forged sign-out from another origin changed nothing")

        press(driver, driver.find_element(By.CSS_SELECTOR, "form.out button"))
        check(arrived(driver, "/login"), "signing out goes back to /login")
        driver.get(BASE + "/")
        check(arrived(driver, "/login"), "after signing out, the pages need a session again")
    finally:
        driver.quit()

    operator = browser()
    try:
        sign_in(operator, OPERATOR)
        release = 'form[action="/held/%s/release"]' % urllib.parse.quote(HELD_UNIT, safe="")
        # The held page open in two tabs, as two people on call may have it.
        operator.get(BASE + "/held")
        operator.save_screenshot(os.path.join(SHOTS, "console-held.png"))
        first = operator.current_window_handle
        operator.switch_to.new_window("tab")
        operator.get(BASE + "/held")
        second = operator.current_window_handle
        operator.switch_to.window(first)
        form = operator.find_element(By.CSS_SELECTOR, release)
        form.find_element(By.NAME, "note").send_keys("paid in RUB, checked with the player")
        press(operator, form.find_element(By.TAG_NAME, "button"))
        check(heading(operator, "Held purchase") and "Released" in operator.page_source, "an operator releases a hold with a note")
        operator.switch_to.window(second)
        form = operator.find_element(By.CSS_SELECTOR, release)
        form.find_element(By.NAME, "note").send_keys("again, from a stale page")
        press(operator, form.find_element(By.TAG_NAME, "button"))
        check(heading(operator, "Held purchase") and "released before" in operator.page_source, "the same release from a stale tab changes nothing")
        operator.get(BASE + "/held")
        check(not operator.find_elements(By.CSS_SELECTOR, release), "the released purchase has left the held page")

        # Dead letters: a group previewed (a dry run), confirmed once; the same confirmation
        # again, from a stale tab, replays nothing.
        operator.get(BASE + "/dead")
        press(operator, operator.find_element(By.CSS_SELECTOR, 'a[href*="reason=retries_exhausted"]'))
        check(heading(operator, "Dead letters: verify") and DEAD_TICKET in operator.page_source, "the preview lists the dead ticket")
        operator.save_screenshot(os.path.join(SHOTS, "console-dead-preview.png"))
        preview = operator.current_url
        operator.switch_to.window(first)
        operator.get(preview)
        press(operator, operator.find_element(By.CSS_SELECTOR, 'form[action="/dead/replay"] button'))
        check(heading(operator, "Dead letters") and "Replayed 1 of the 1" in operator.page_source, "an operator replays the previewed group")
        operator.switch_to.window(second)
        press(operator, operator.find_element(By.CSS_SELECTOR, 'form[action="/dead/replay"] button'))
        check(heading(operator, "Dead letters") and "Nothing replayed" in operator.page_source, "the same confirmation again replays nothing")

        # The business at a glance: the day's sales charted per currency, money written for people,
        # drawn on the server (no script, the CSP unchanged).
        operator.get_log("browser")  # what came before (the stale tab's expected 409s) is not this page's
        operator.get(BASE + "/business?days=30&environment=Production")
        check(heading(operator, "Business"), "an operator sees the Business page")
        usd = operator.find_elements(By.CSS_SELECTOR, 'section.chart[data-currency="USD"]')
        check(bool(usd) and "$4.99" in usd[0].text and bool(usd[0].find_elements(By.CSS_SELECTOR, "svg.bars rect.gross")),
              "the USD sale is charted and its money written $4.99")
        check("No subscribers now" in operator.page_source, "no subscriber is counted where none subscribed")
        errors = [entry for entry in operator.get_log("browser") if entry["level"] == "SEVERE"]
        check(not errors, "the Business page raises no error or CSP violation: %s" % errors)
        operator.save_screenshot(os.path.join(SHOTS, "console-business.png"))
    finally:
        operator.quit()

    plain = browser(javascript=False)
    try:
        sign_in(plain)
        check("dead letters" in plain.page_source, "with JavaScript off the pages work")
        plain.get(BASE + "/business")
        check("Business" not in [h.text for h in plain.find_elements(By.TAG_NAME, "h1")]
              and not plain.find_elements(By.CSS_SELECTOR, "section.chart"), "a viewer is not shown the Business page")
    finally:
        plain.quit()

    if failures:
        print("%d check(s) failed" % len(failures))
        sys.exit(1)
    print("all browser checks held")


if __name__ == "__main__":
    main()
