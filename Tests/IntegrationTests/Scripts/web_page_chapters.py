#!/usr/bin/python3
"""The web page's chapter list in a real browser (headless chromium through selenium, as
web_page.py), for WebPageChaptersTests: the list, the chapter heard marked, a tap seeks.

    web_page_chapters.py BASE_URL SCREENSHOT_PATH

Prints one JSON step a line; the Swift test judges. Waits for conditions with deadlines.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402
from web_page import BASE, SHOT, drive, step  # noqa: E402

TITLES = "return [...document.querySelectorAll('#chapterList li')].map(li => li.firstChild.textContent)"
CURRENT = "const li = document.querySelector('#chapterList li.current'); return li ? li.firstChild.textContent : null"


def run(driver):
    wait = lambda timeout: WebDriverWait(driver, timeout, poll_frequency=0.05)
    driver.get(BASE + "/")
    wait(10).until(lambda d: d.find_element(By.ID, "connection").text == "connected")
    wait(10).until(lambda d: len(d.execute_script(TITLES)) == 3)
    step("section shown", driver.find_element(By.ID, "chaptersSection").is_displayed())
    step("chapters", driver.execute_script(TITLES))
    wait(10).until(lambda d: d.execute_script(CURRENT) is not None)
    step("current", driver.execute_script(CURRENT))
    driver.find_elements(By.CSS_SELECTOR, "#chapterList li")[2].click()
    wait(10).until(lambda d: d.execute_script(CURRENT) == "End")
    step("after tap", driver.execute_script(CURRENT))
    step("elapsed after tap", driver.find_element(By.ID, "elapsed").text)
    driver.save_screenshot(SHOT)
    step("console", [entry for entry in driver.get_log("browser") if entry.get("level") in ("SEVERE", "WARNING")])


if __name__ == "__main__":
    drive(run)
