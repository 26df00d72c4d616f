#!/usr/bin/python3
"""The web page's downloads and location track in a real browser (headless chromium through
selenium, as web_page.py), for WebPageTests.

    web_page_progress.py BASE_URL SCREENSHOT_PATH LAST_FIX_TIME

Prints one JSON step a line; the Swift test judges. Waits for conditions with deadlines.
"""
import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402
from web_page import BASE, SHOT, drive, step  # noqa: E402
from ws_api import Client, fetch_now  # noqa: E402

LAST_FIX_TIME = sys.argv[3]


async def push():
    client = await Client.open()
    try:
        return await fetch_now(client)
    finally:
        await client.close()


def run(driver):
    wait = lambda timeout: WebDriverWait(driver, timeout, poll_frequency=0.05)
    driver.get(BASE + "/")
    wait(10).until(lambda d: d.find_element(By.ID, "connection").text == "connected")

    # Only now the feed is fetched and its episode downloaded (the daemon runs with
    # `--fetch-interval never`): however long the browser took to start, the page is there to
    # watch the whole download.
    step("push", asyncio.run(push()))

    # A download's bar advances: its fill grows while it downloads.
    wait(30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#downloadList li.downloading"))
    fill = lambda: driver.execute_script(
        "const f = document.querySelector('#downloadList li.downloading .fill');"
        "return f ? parseFloat(getComputedStyle(f).width) : null")
    widths = [fill()]
    for _ in range(3):
        before = widths[-1] or 0
        wait(10).until(lambda d: (fill() or 0) > before)
        widths.append(fill())
    step("download widths", widths)
    item = driver.find_element(By.CSS_SELECTOR, "#downloadList li.downloading")
    step("download text", item.text)
    step("download section shown", driver.find_element(By.ID, "downloadsSection").is_displayed())

    # The track: drawn once there are fixes, with one point per fix kept (at most 100).
    wait(60).until(lambda d: LAST_FIX_TIME in d.find_element(By.ID, "lastFix").text)
    points = driver.execute_script(
        "const l = document.querySelector('#track polyline');"
        "return l ? l.getAttribute('points').trim().split(/\\s+/).length : 0")
    step("track points", points)
    step("track shown", driver.find_element(By.ID, "track").is_displayed())
    step("track size", driver.execute_script(
        "const b = document.getElementById('track').getBoundingClientRect(); return [b.width, b.height]"))
    step("page width", driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]"))
    driver.save_screenshot(SHOT)
    step("screenshot", SHOT)
    step("console", [entry for entry in driver.get_log("browser") if entry.get("level") in ("SEVERE", "WARNING")])


if __name__ == "__main__":
    drive(run)
