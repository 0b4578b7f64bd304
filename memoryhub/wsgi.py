import gc
import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
application = get_wsgi_application()

# Import every view now and move what is loaded out of the cyclic collector's sight. A
# full collection walked Django's ~100,000 startup objects for 20-30 ms, mid-request: most
# of the slowest 1% of searches. What requests allocate is still collected as before.
get_resolver().url_patterns  # noqa: B018 - imports the URLconf and every view
gc.collect()  # what start-up left as garbage is freed, not frozen for good
gc.freeze()
