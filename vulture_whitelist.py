"""Names in src that vulture (`make lint`) sees no caller for, yet are called.

Only what something outside src calls by name belongs here: a framework or Python
itself, the library's users, or the tests through the test doubles and tables src keeps
for them. Code that nothing calls is removed, not listed.
"""

# ruff: noqa: B018 - a bare attribute is how a whitelist marks a name as used

import logging
import sqlite3
from typing import Any

from starlette.routing import Router

from intake.adapters import blobs
from intake.adapters.memory.clock import FakeClock
from intake.adapters.memory.senders import FakeMailer, FakeWebhookSender, SentWebhook
from intake.adapters.memory.store import InMemoryStore
from intake.adapters.postgres import migrations
from intake.adapters.ratelimit_fallback import FallbackRateLimiter
from intake.adapters.ratelimit_memory import InProcessRateLimiter
from intake.adapters.sql_rows import Row
from intake.adapters.templates.sandbox import _BoundedCodeGenerator, _MailSandbox
from intake.domain import steps
from intake.domain.errors import Rejection
from intake.domain.form_messages import Templates
from intake.entrypoints.http.app import served_app
from intake.entrypoints.http.dashboard.charts import Chart
from intake.entrypoints.http.dashboard.inbox import InboxQuery
from intake.entrypoints.http.dashboard.submission_view import ShownValue
from intake.entrypoints.http.httptools_protocol import IntakeHttpToolsProtocol
from intake.entrypoints.http.protocol import IntakeH11Protocol
from intake.entrypoints.library import Intake, SubmissionResult
from intake.ports.destinations import DestinationRepository
from intake.ports.workspaces import FormStatusCounts
from intake.service.accounts import Sent

# Any object: a parameter's name is marked as used by reading it as an attribute.
_: Any = None

# Python: a module's lazy attributes (PEP 562), a Protocol's item access, and the
# parameters of `__aexit__`, which the with-statement passes.
blobs.__getattr__
Row.__getitem__
_.exc_type
_.tb

# attrs: a field's default and validator, named by decorator.
Rejection._spec
Rejection._same_code

# sqlite3, Starlette and uvicorn read these attributes; uvicorn loads the protocol class
# by its dotted name (`intake serve`) and calls its 400 hook with the parser's message.
sqlite3.Connection.row_factory
Router.redirect_slashes
IntakeH11Protocol
IntakeH11Protocol.send_400_response
IntakeHttpToolsProtocol
IntakeHttpToolsProtocol.send_400_response
_.msg

# The Python library's API, called by its users' code.
SubmissionResult.ok
SubmissionResult.error_code
SubmissionResult.error_message
SubmissionResult.error_fields
Intake.submit_body

# The test doubles' controls and what they record.
FakeClock.advance
FakeMailer.script
FakeWebhookSender.script
SentWebhook.webhook_id
InMemoryStore.count_submissions
InMemoryStore.count_outbox
InMemoryStore.outbox_for

# Read by the tests only: the tables they empty, the step-to-code table they check
# refusals against, a stored endpoint read back, and state the adapters expose.
migrations.TABLES
steps.STEP_CODES
DestinationRepository.get_endpoint
FallbackRateLimiter.degraded
InProcessRateLimiter.keys_held

# Read by name (Templates.get, getattr), and by Jinja2's sandbox.
Templates.notification_subject
Templates.notification_text
Templates.notification_html
Templates.autoresponse_subject
Templates.autoresponse_text
Templates.autoresponse_html
_MailSandbox.intercepted_binops
_MailSandbox.intercepted_unops
_MailSandbox.code_generator_class
_MailSandbox.concat
_MailSandbox.bounded_concat  # called by the code _BoundedCodeGenerator writes
_BoundedCodeGenerator.visit_Concat

# Read by the dashboard's templates, which vulture does not read.
Sent.mail_set_up
FormStatusCounts.unverified
Chart.svg
Chart.first_day
Chart.last_day
InboxQuery.filtered
ShownValue.length

# uvicorn imports the serving factory by its name (`intake serve`).
served_app

# The standard library's switches for what a log record looks up (logs.py), read by
# `logging` itself.
logging._srcfile
logging.logThreads
logging.logProcesses
logging.logMultiprocessing

# The learning filter while its stores and wiring land (issue in progress): removed once
# the pipeline and the triage call them.
from intake.domain.spam import classifier as _spam_classifier  # noqa: E402
from intake.domain.spam import model as _spam_model  # noqa: E402

_spam_classifier.judge
_spam_model.unpack
_spam_model.Evidence
_spam_model.Evidence.instance
# The word memo's protocol: the classifier stores an f by subscription (memo[word] = f).
_spam_model.WordMemo.__setitem__

# The spam filter's process cache: tokens_held and words_held are what the tests read of
# its budget.
from intake.service import spam_knowledge as _spam_knowledge  # noqa: E402

_spam_knowledge.SpamKnowledge.tokens_held
_spam_knowledge.SpamKnowledge.words_held


# The library's public surface: a program runs it on a container it composed and
# overrode (docs/architecture.md, "Compositions").
from intake.entrypoints import library as _library  # noqa: E402

_library.Intake.running
