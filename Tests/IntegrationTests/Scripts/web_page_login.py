#!/usr/bin/python3
"""The web page's password form in a real browser (headless chromium through selenium, as
web_page.py), for WebPageTests, against a daemon that lets a client without a password read
nothing.

    web_page_login.py BASE_URL SCREENSHOT_PATH PASSWORD

Prints one JSON step a line; the Swift test judges. Waits for conditions with deadlines.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402
from web_page import BASE, SHOT, drive, step  # noqa: E402

PASSWORD = sys.argv[3]


def run(driver):
    wait = lambda timeout: WebDriverWait(driver, timeout, poll_frequency=0.05)
    driver.get(BASE + "/")
    wait(10).until(lambda d: d.find_element(By.ID, "connection").text == "connected")
    wait(10).until(lambda d: d.find_element(By.ID, "login").is_displayed())
    step("form shown", True)

    field = driver.find_element(By.ID, "password")
    field.send_keys("not-" + PASSWORD)
    driver.find_element(By.CSS_SELECTOR, "#login button").click()
    wait(10).until(lambda d: d.find_element(By.ID, "loginMessage").text != "")
    step("wrong password message", driver.find_element(By.ID, "loginMessage").text)
    step("form still shown", driver.find_element(By.ID, "login").is_displayed())

    field.clear()
    field.send_keys(PASSWORD)
    driver.find_element(By.CSS_SELECTOR, "#login button").click()
    wait(10).until(lambda d: not d.find_element(By.ID, "login").is_displayed())
    wait(10).until(lambda d: d.find_element(By.ID, "title").text not in ("", "Nothing playing"))
    step("title after", driver.find_element(By.ID, "title").text)
    wait(10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#queue li.current"))
    step("queue after", len(driver.find_elements(By.CSS_SELECTOR, "#queue li")))
    # The ticks come now: the time moves.
    first = driver.find_element(By.ID, "elapsed").text
    wait(10).until(lambda d: d.find_element(By.ID, "elapsed").text != first)
    step("time moves", True)
    driver.save_screenshot(SHOT)
    step("console", [entry for entry in driver.get_log("browser") if entry.get("level") in ("SEVERE", "WARNING")])


if __name__ == "__main__":
    drive(run)
