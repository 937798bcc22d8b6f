"""The local web: a real HTTP server on 127.0.0.1 that serves the suite's pages, changes the
level-5 pages per visit and session, and leaves no port open when stopped."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request

import pytest

from evalbench.browse_suite.data import load_suite
from evalbench.browse_suite.site import LocalWeb


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, ""


def test_it_serves_static_and_dynamic_pages_and_stops_with_no_port_left_open():
    web = LocalWeb().start()
    port = web.port
    try:
        status, body = _get(web.url("s1", "library/index.html"))
        assert status == 200 and "09:00–20:00" in body
        status, body = _get(web.url("s1", "library/search?q=lantern+almanac"))
        assert "1 result for" in body and "book?id=b03" in body
        status, body = _get(web.url("s1", "library/events?page=3"))
        assert "Seed Swap Morning" in body and "Page 3 of 3" in body
        status, body = _get(web.url("s1", "shop/stores-result?region=harbour"))
        assert all(name in body for name in ("Quayside", "Net Loft", "Slipway"))
        status, body = _get(web.url("s1", "shop/api/products.json"))
        assert json.loads(body)[2]["price"] == 6.8
        assert _get(web.url("s1", "library/events?page=9"))[0] == 404
        assert _get(web.url("s1", "../../../etc/passwd"))[0] == 404
        assert _get(f"{web.origin}/library/index.html")[0] == 404  # no session prefix
    finally:
        web.stop()
    with pytest.raises(OSError):  # nothing listens on the port any more
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    web.stop()  # idempotent


def test_every_task_start_page_serves_and_scripted_pages_need_javascript():
    with LocalWeb() as web:
        for task in load_suite():
            status, _body = _get(web.url("check", task.start))
            assert status == 200, task.id
        _, catalog = _get(web.url("check", "shop/catalog.html"))
        assert "Brass Hinge Set" not in catalog
        assert "Loading catalogue" in catalog  # the prices come from api/products.json by script


def test_changing_pages_step_through_their_states_per_session_and_reset():
    with LocalWeb() as web:
        first = _get(web.url("a", "weather/now.html"))[1]
        second = _get(web.url("a", "weather/now.html"))[1]
        other = _get(web.url("b", "weather/now.html"))[1]  # another session starts at visit 1
        assert "12.4 °C" in first and "13.1 °C" in second and "12.4 °C" in other
        for _ in range(5):
            last = _get(web.url("a", "weather/now.html"))[1]
        assert "13.6 °C" in last  # the last state holds
        web.reset("a")
        assert "12.4 °C" in _get(web.url("a", "weather/now.html"))[1]
        visits = [s.visit for s in web.served("a") if s.path == "weather/now.html"]
        assert visits == [1, 2, 3, 4, 5, 6, 7, 1]


def test_the_queue_ticket_is_escaped_html_from_the_data():
    with LocalWeb() as web:
        body = _get(web.url("q", "shop/queue.html"))[1]
        assert "<b>TL-20931</b>" in body and "{{" not in body


# Where each task's answer is on the served pages (raw HTML, scripts' data included): the
# expected values, or the numbers they are computed from.
ANSWERS = {
    "L1-library-hours": [("library/index.html", ["Wednesday</td><td>09:00–20:00", "01632 960 418"])],
    "L1-observatory-facts": [("observatory/index.html", ["Founded in 1964", "412 metres"])],
    "L1-shop-delivery": [("shop/delivery.html", ["£4.95", "free on orders over £40"])],
    "L1-weather-record": [("weather/records.html", ["31.4 °C</td><td>2019-07-25"])],
    "L1-transit-fares": [("transit/fares.html", ["<td>Single</td><td>£2.40", "<td>Day ticket</td><td>£5.20</td><td>£3.10"])],
    "L1-news-harbour-wall": [("news/article-harbour-wall.html", ["86 metres", "Priya Valdés", "£1.3 million"])],
    "L2-library-event": [("library/events?page=3", ["2025-04-19</td><td>Seed Swap Morning</td><td>Garden</td><td>Reading Room B"])],
    "L2-library-catalogue": [("library/book?id=b03", ["Hollis Marchetti", "1998", "FIC MAR 3"])],
    "L2-observatory-twite": [("observatory/species/twite.html", ["Linaria flavirostris", "<td>1971</td>"])],
    "L2-observatory-dotterel": [("observatory/sightings?page=3", ["2024-05-03</td><td>Eurasian Dotterel</td><td>3</td><td>A. Lindqvist"])],
    "L2-transit-line3": [("transit/line-3.html", ["<td>08:12</td><td>08:20</td><td>08:33</td><td>08:41</td>"])],
    "L2-library-branches": [("library/branches.html", ["three buildings", "Open Tuesday, Thursday and Saturday"])],
    "L3-shop-hinges": [("shop/api/products.json", ['"Brass Hinge Set (pair)", "price": 6.80, "stock": 14'])],
    "L3-ring-ouzel-counts": [("observatory/counts.html", ['"Ring Ouzel": [0, 0, 2, 18, 9, 4, 3, 6, 21, 47, 24, 3]'])],
    "L3-shop-stores": [("shop/stores-result?region=harbour", ["Quayside", "Net Loft", "Slipway", "Sunday</td><td>09:00–13:00"])],
    "L3-weather-climate": [("weather/climate.html", ['["November", 10.0, 4.4, 128]'])],
    "L3-drill-specs": [("shop/product-drill.html", ['"2 × 2.0 Ah lithium-ion"', '"1.45 kg"'])],
    "L3-children-events": [("library/events?category=Children", ["5 events in Children", "Storytelling with Grandparents"])],
    "L4-drill-cheaper": [("shop/api/products.json", ['"18V Cordless Drill", "price": 89.00']), ("market/tools.html", ["£84.50"]), ("market/delivery.html", ["free on orders of £50 or more"])],
    "L4-elevation": [("observatory/index.html", ["412 metres"]), ("weather/index.html", ["95 m above sea level"])],
    "L4-seed-swap": [("news/article-gardeners.html", ["Seed Swap Morning"]), ("library/index.html", ["line 2 stops at \"Quarry Lane\""])],
    "L4-twite-flock": [("news/article-ridge-survey.html", ["55 Twite"]), ("observatory/counts.html", ['"Twite": [12, 8, 3, 0, 0, 0, 0, 4, 27, 55, 38, 21]'])],
    "L4-cheaper-at-millbrook": [("market/tools.html", ["£11.95", "£17.10", "£22.50", "£3.95"])],
    "L4-late-weekdays": [("shop/stores-result?region=harbour", ["Thursday</td><td>08:00–17:00"]), ("library/index.html", ["Friday</td><td>09:00–17:00"])],
    "L5-transit-board": [("transit/board.html", ["On time"]), ("transit/board.html", ["Delayed 7 min", "Cancelled"])],
    "L5-weather-now": [("weather/now.html", ["12.4 °C"]), ("weather/now.html", ["13.1 °C"])],
    "L5-shop-queue": [("shop/queue.html", ["TL-20931", "Estimated wait: 6 min"])],
    "L5-observatory-live": [("observatory/live.html", ["Meadow Pipit</td><td>41"]), ("observatory/live.html", []), ("observatory/live.html", ["Meadow Pipit</td><td>63", "Merlin"])],
    "L5-news-latest": [("news/latest.html", ["09:40 Ferry"]), ("news/latest.html", ["10:05 Storm warning issued for the weekend"])],
    "L5-shop-deal": [("shop/deal.html", ["Tenon Saw 250mm", "20%"]), ("shop/deal.html", ["Chisel Set (4 pieces)", "25%"])],
}  # fmt: skip


def test_every_answer_is_on_the_served_pages_in_order_of_visits():
    tasks = {t.id: t for t in load_suite()}
    assert set(ANSWERS) == set(tasks)
    with LocalWeb() as web:
        for task_id, visits in ANSWERS.items():
            for path, needles in visits:  # in order: changing pages advance per visit
                status, body = _get(web.url(task_id, path))
                assert status == 200, (task_id, path)
                for needle in needles:
                    assert needle in body, (task_id, path, needle)
