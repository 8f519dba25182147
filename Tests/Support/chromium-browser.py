#!/usr/bin/python3
"""A person with a real browser, for the tests: Debian's Chromium, headless, driven through
chromium-driver with Selenium. Use it as $BROWSER:

    chromium-browser.py URL

URL is an authorization request to the test authorization server (Tests/AuthServer,
django-oauth-toolkit). Chromium opens it, the person fills the server's login form and
presses Authorize (or Cancel) on its consent page, and from there Chromium does what it
does: it follows the redirect to the client's loopback listener itself, with its own
preconnects, favicon request and keep-alive. Once the listener's page has loaded, and a
second more for the requests a browser makes after a page, the page is saved as a person
sees it: a screenshot (NAME.png), its title and visible text (NAME.json: title, text, and
the address without its query, which holds the code), in CHROMIUM_BROWSER_ARTEFACTS.
Detaches and returns at once, as a browser does.

Environment:
    CHROMIUM_BROWSER_SERVER_JSON  the server.json of Tests/Support/auth-server.sh (required)
    CHROMIUM_BROWSER_ARTEFACTS    folder for NAME.png and NAME.json (required)
    CHROMIUM_BROWSER_NAME         NAME (default: page)
    CHROMIUM_BROWSER_USER         user name (default: ada)
    CHROMIUM_BROWSER_ACTION       allow (default) | deny (Cancel on the consent page)
    CHROMIUM_BROWSER_LOG          file to append one line per step to
    CHROMIUM_BROWSER_PYTHON       a Python with selenium, run instead when this one has none
    CHROMIUM_BROWSER_FOREGROUND   1: do not detach

Nothing secret (codes, passwords, query strings) is written to the log or the artefacts.
Exit status (foreground): 0 done, 1 failed (the reason is in the log), 2 usage.
"""
import json
import os
import shutil
import sys
import tempfile
import time
from urllib.parse import parse_qs, urlsplit

from browser_standin import detach, redact

# Chromium's first start in a fresh profile, on a machine busy with a build, takes a few
# seconds; the whole sign-in must end well inside the login's own wait.
PAGE_SECONDS = 30
# After the listener's page: what Chromium fetches after a page (favicon) has gone out.
SETTLE_SECONDS = 1.0

_log_path = os.environ.get("CHROMIUM_BROWSER_LOG")


def log(line):
    if not _log_path:
        return
    with open(_log_path, "a", encoding="utf-8") as f:
        f.write(f"chromium-browser[{os.getpid()}] {line}\n")


def where(url):
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def run(url):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    with open(os.environ["CHROMIUM_BROWSER_SERVER_JSON"], encoding="utf-8") as f:
        server = json.load(f)
    user = os.environ.get("CHROMIUM_BROWSER_USER") or "ada"
    password = next(u["password"] for u in server["users"] if u["username"] == user)
    action = os.environ.get("CHROMIUM_BROWSER_ACTION") or "allow"
    artefacts = os.environ["CHROMIUM_BROWSER_ARTEFACTS"]
    name = os.environ.get("CHROMIUM_BROWSER_NAME") or "page"
    redirect = urlsplit((parse_qs(urlsplit(url).query).get("redirect_uri") or [""])[0])

    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--no-first-run",
                     "--window-size=900,600", f"--user-data-dir={profile}"):
        options.add_argument(argument)
    service = Service(executable_path="/usr/bin/chromedriver", log_output=os.devnull)
    driver = webdriver.Chrome(service=service, options=options)
    try:
        driver.set_page_load_timeout(PAGE_SECONDS)
        wait = WebDriverWait(driver, PAGE_SECONDS)
        log(f"open {where(url)}")
        driver.get(url)
        wait.until(expected_conditions.presence_of_element_located((By.ID, "id_username")))
        log(f"login form at {where(driver.current_url)}, signing in as {user}")
        driver.find_element(By.ID, "id_username").send_keys(user)
        driver.find_element(By.ID, "id_password").send_keys(password)
        driver.find_element(By.CSS_SELECTOR, "#loginForm input[type=submit]").click()
        wait.until(expected_conditions.presence_of_element_located((By.ID, "authorizationForm")))
        button = "input[name=allow]" if action == "allow" else "input[type=submit]:not([name=allow])"
        log(f"consent page at {where(driver.current_url)}: {action}")
        driver.find_element(By.CSS_SELECTOR, f"#authorizationForm {button}").click()
        # Chromium follows the server's redirect to the listener on its own.
        wait.until(lambda d: urlsplit(d.current_url).netloc == redirect.netloc
                   and d.execute_script("return document.readyState") == "complete")
        time.sleep(SETTLE_SECONDS)
        body = driver.find_element(By.TAG_NAME, "body").text
        log(f"listener's page at {where(driver.current_url)}: {driver.title!r}")
        os.makedirs(artefacts, exist_ok=True)
        driver.save_screenshot(os.path.join(artefacts, f"{name}.png"))
        page = {"title": driver.title, "text": body, "address": where(driver.current_url)}
        with open(os.path.join(artefacts, f"{name}.json.tmp"), "w", encoding="utf-8") as f:
            json.dump(page, f)
        os.replace(os.path.join(artefacts, f"{name}.json.tmp"), os.path.join(artefacts, f"{name}.json"))
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def main(argv):
    if len(argv) != 1 or argv[0].startswith("-"):
        print("usage: chromium-browser.py URL", file=sys.stderr)
        return 2
    try:
        import selenium  # noqa: F401
    except ImportError:
        python = os.environ.get("CHROMIUM_BROWSER_PYTHON")
        if not python:
            print("chromium-browser.py: no selenium: set CHROMIUM_BROWSER_PYTHON (make auth-server-deps)",
                  file=sys.stderr)
            return 2
        os.execv(python, [python, os.path.abspath(__file__)] + argv)
    if os.environ.get("CHROMIUM_BROWSER_FOREGROUND") != "1":
        detach()
    try:
        run(argv[0])
    except Exception as error:  # never a traceback: it could quote a URL with a code
        log(f"failed: {type(error).__name__}: {redact(error)}")
        return 1
    log("done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
