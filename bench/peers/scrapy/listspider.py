"""Scrapy peer of trawl's fetch benchmark (bench/fetch).

GETs every URL of a list (one per line, -a urls=FILE) and prints one JSON
object on stdout when the spider closes: urls, responses, ok (status 200),
errors, bytes, seconds (spider open to close).

Settings equivalent to the other contenders': CONCURRENT_REQUESTS 64 (set
with -s CONCURRENT_REQUESTS=N), CONCURRENT_REQUESTS_PER_DOMAIN 1,
DOWNLOAD_DELAY 0, robots.txt obeyed (as trawl), redirects not followed,
no retries, no cookies, every status handed to the callback, bodies
downloaded by Scrapy and not parsed, no link following: start_urls is the
list. Run with Debian's Scrapy:

    /usr/bin/python3 -m scrapy runspider listspider.py -a urls=urls.txt \
        -s CONCURRENT_REQUESTS=64 -s USER_AGENT=scrapy-bench
"""

import json
import sys
import time

import scrapy


class ListSpider(scrapy.Spider):
    """Fetches the URLs of a file, nothing else."""

    name = "list"
    custom_settings = {
        "CONCURRENT_REQUESTS": 64,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "CONCURRENT_REQUESTS_PER_IP": 0,
        "DOWNLOAD_DELAY": 0,
        "RANDOMIZE_DOWNLOAD_DELAY": False,
        "AUTOTHROTTLE_ENABLED": False,
        "ROBOTSTXT_OBEY": True,
        "REDIRECT_ENABLED": False,
        "RETRY_ENABLED": False,
        "COOKIES_ENABLED": False,
        "HTTPERROR_ALLOW_ALL": True,
        "DOWNLOAD_TIMEOUT": 30,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "WARNING",
    }

    def __init__(self, urls=None, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not urls:
            raise ValueError("need -a urls=FILE")
        with open(urls, encoding="utf-8") as f:
            self.start_urls = [line.strip() for line in f if line.strip()]
        self.responses = 0
        self.ok = 0
        self.errors = 0
        self.bytes = 0
        self.first_error = ""
        self.started = time.monotonic()

    def start_requests(self):
        for url in self.start_urls:
            yield scrapy.Request(url, callback=self.parse, errback=self.failed, dont_filter=True)

    def parse(self, response):
        self.responses += 1
        self.bytes += len(response.body)
        if response.status == 200:
            self.ok += 1

    def failed(self, failure):
        self.errors += 1
        if not self.first_error:
            self.first_error = repr(failure.value)

    def closed(self, reason):
        json.dump(
            {
                "urls": len(self.start_urls),
                "responses": self.responses,
                "ok": self.ok,
                "errors": self.errors,
                "bytes": self.bytes,
                "seconds": time.monotonic() - self.started,
                "first_error": self.first_error,
                "reason": reason,
            },
            sys.stdout,
        )
        sys.stdout.write("\n")
        sys.stdout.flush()
