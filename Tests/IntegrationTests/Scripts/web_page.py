#!/usr/bin/python3
"""The web page in a real browser: Debian's chromium, headless, driven by selenium through
chromium-driver, for WebPageTests. One browser for every check.

    web_page.py BASE_URL SCREENSHOT_PATH

Prints one JSON step a line, as ws_api.py does; the Swift test judges. Waits for conditions
with deadlines, never for fixed times.
"""
import json
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

BASE, SHOT = sys.argv[1], sys.argv[2]


def step(name, ok=None, error=None):
    print(json.dumps({"step": name, "ok": ok} if error is None else {"step": name, "error": error}), flush=True)


def seconds(text):
    parts = [int(p) for p in text.split(":")]
    total = 0
    for part in parts:
        total = total * 60 + part
    return total


def browser():
    """Headless chromium through chromium-driver, phone-sized, keeping the console's messages."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=412,915", "--no-first-run", "--disable-extensions"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def drive(run):
    """Runs `run(driver)` in a fresh browser, quit after; an exception is printed as a step."""
    try:
        driver = browser()
        try:
            run(driver)
        finally:
            driver.quit()
    except Exception as error:
        step("exception", error=f"{type(error).__name__}: {error}")


def run(driver):
    wait = lambda timeout: WebDriverWait(driver, timeout, poll_frequency=0.02)
    started = time.monotonic()
    driver.get(BASE + "/")
    wait(10).until(lambda d: d.find_element(By.ID, "connection").text == "connected")
    wait(10).until(lambda d: d.find_element(By.ID, "title").text not in ("", "Nothing playing"))
    step("loaded after", time.monotonic() - started)
    step("title", driver.find_element(By.ID, "title").text)
    step("artist", driver.find_element(By.ID, "artist").text)
    step("queue", [li.text.split("\n")[0] for li in driver.find_elements(By.CSS_SELECTOR, "#queue li")])
    wait(10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#queue li.current"))
    step("current entry", driver.find_element(By.CSS_SELECTOR, "#queue li.current").text.split("\n")[0])
    step("outputs", [li.text for li in driver.find_elements(By.CSS_SELECTOR, "#outputs li")])

    # The bar moves: its width grows between two looks a few frames apart.
    fill = lambda: float(driver.execute_script("return parseFloat(getComputedStyle(document.getElementById('fill')).width)"))
    first = fill()
    wait(5).until(lambda d: fill() > first + 0.5)
    elapsed_first = seconds(driver.find_element(By.ID, "elapsed").text)
    wait(5).until(lambda d: seconds(d.find_element(By.ID, "elapsed").text) > elapsed_first)
    widths = []
    for _ in range(20):
        widths.append(fill())
        driver.execute_script("return new Promise(r => requestAnimationFrame(() => r()))")
    step("widths", widths)

    # Next: the title changes within a second of the click.
    before = driver.find_element(By.ID, "title").text
    clicked = time.monotonic()
    driver.find_element(By.ID, "next").click()
    try:
        wait(1).until(lambda d: d.find_element(By.ID, "title").text != before)
        step("next after", time.monotonic() - clicked)
    except Exception:
        step("next after", None)
    step("title after next", driver.find_element(By.ID, "title").text)

    # Clicking the bar at three quarters seeks there.
    wait(5).until(lambda d: seconds(d.find_element(By.ID, "duration").text) > 0)
    duration = seconds(driver.find_element(By.ID, "duration").text)
    bar = driver.find_element(By.ID, "bar")
    width = bar.size["width"]
    webdriver.ActionChains(driver).move_to_element_with_offset(bar, int(width * 0.75) - width // 2, 0).click().perform()
    try:
        wait(3).until(lambda d: abs(seconds(d.find_element(By.ID, "elapsed").text) - 0.75 * duration) <= 2)
        step("seeked to", [seconds(driver.find_element(By.ID, "elapsed").text), duration])
    except Exception:
        step("seeked to", [seconds(driver.find_element(By.ID, "elapsed").text), duration, "timeout"])

    # Clicking a queue entry plays it.
    entries = driver.find_elements(By.CSS_SELECTOR, "#queue li")
    target = entries[3]
    target_title = target.text.split("\n")[0]
    target.click()
    try:
        wait(3).until(lambda d: d.find_element(By.CSS_SELECTOR, "#queue li.current").text.split("\n")[0] == target_title
                      and d.find_element(By.ID, "title").text == target_title)
        step("played entry", target_title)
    except Exception:
        step("played entry", None)

    # Pause and play again.
    driver.find_element(By.ID, "playpause").click()
    wait(3).until(lambda d: d.find_element(By.ID, "state").text == "pause")
    driver.find_element(By.ID, "playpause").click()
    wait(3).until(lambda d: d.find_element(By.ID, "state").text == "play")
    step("pause and play", True)

    # Volume.
    driver.execute_script("const v = document.getElementById('volume'); v.value = 35; v.dispatchEvent(new Event('change'));")
    wait(3).until(lambda d: d.find_element(By.ID, "volumeValue").text == "35")
    step("volume", driver.find_element(By.ID, "volumeValue").text)

    # Playback rate, pitch algorithm and skip silence, set through the page's own controls as a
    # user would; the Swift test asks the daemon what they set. Then the shown time runs at 1.5x.
    rate = Select(driver.find_element(By.ID, "rate"))
    step("rate choices", [option.get_attribute("value") for option in rate.options])
    rate.select_by_value("1.5")
    Select(driver.find_element(By.ID, "pitch")).select_by_value("varispeed")
    driver.find_element(By.ID, "skipSilence").click()
    wait(3).until(lambda d: d.execute_script("return view.rate") == 1.5)
    step("rate shown", Select(driver.find_element(By.ID, "rate")).first_selected_option.get_attribute("value"))
    read_time = lambda: driver.execute_script("return [performance.now() / 1000, view.tickElapsed]")
    first_time = read_time()
    wait(10).until(lambda d: read_time()[0] - first_time[0] >= 3)
    last_time = read_time()
    step("item time per second", (last_time[1] - first_time[1]) / (last_time[0] - first_time[0]))

    # A layout that fits a phone: nothing wider than the window.
    step("page width", driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]"))
    driver.save_screenshot(SHOT)
    step("screenshot", SHOT)
    step("console", [entry for entry in driver.get_log("browser")
                     if entry.get("level") in ("SEVERE", "WARNING")])


if __name__ == "__main__":
    drive(run)
