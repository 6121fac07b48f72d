"""The migrations as files: what each sends stays as released, and the folder's README
points at the live version of each function."""

from __future__ import annotations

import hashlib
import re
from importlib.resources import files

import pytest

from intake.adapters.postgres.migrations import MIGRATIONS as PG_MIGRATIONS
from intake.adapters.postgres.migrations import REPEATABLES as PG_REPEATABLES
from intake.adapters.sql_migrations import Migration, statements_of
from intake.adapters.sqlite.migrations import MIGRATIONS as SQLITE_MIGRATIONS

# The statements each released migration sends, by SHA-256 (NUL between statements); the
# comments beside them are not counted. A new migration adds its line here; a line that
# stops matching is a released migration edited, which databases already past it never run.
# The one edit made: the earlier definitions of intake_commit taken out of 0001, 0004,
# 0006, 0008 and 0024, as its repeatable file drops and makes it on any database.
PG_RELEASED = {
    "0001_initial": "601fb95eff27f6752b5c40d3be86f402b42a758a0369b3151c5fdaacbce82566",
    "0002_outbox_published": "cd1a511ed1f7648327829bd2a547daf6db85a89e5c5d37f78bd5284c01f430bf",
    "0003_delivery": "c289f1d0d1996e848e1d70fe69c1ace58c181b1a056a6ea59ad58c3a85e81bac",
    "0004_commit_in_parallel": "1dd30924b65f4efba243894e00bac10d589798f703bc2747827e093af74dcf42",
    "0005_form_changes": "1322b8dd35507690f195411b81b29381e39ac68738b89b33db1d19b09594dfaa",
    "0006_uploads": "f457c3668e4350067aabc63ef282e4f52df922e1b9f4e649ebb06f3faf738e3f",
    "0007_honeypot_hits": "119abd7a0a89a1bddf966146881090ad1569627cf577736132cdff605b0125dc",
    "0008_storage_ceiling": "747b17ec26e45ecfbed9066087ad009744b7c6f3aa0c75b3527a57105803f98a",
    "0009_key_scopes": "d38322c65576c33034f6f5c94839aacef4120232538b83b0396e8f430b00c513",
    "0010_submission_search": "e560011c33efb598cd953b25a3fac44d8c4d6283d1bec320efd86d2315ffc476",
    "0011_delivery_attempts": "cbd4ed093cda47c35dad6b7a5556c0ffdd56cae40399f842c4d804455c1fb2c7",
    "0012_form_usage": "38d4a36ace6143b77406781ca30a2cd2fb1f46a7fa1afe9c7b8fcfcc08d97124",
    "0013_users": "fe9505114df96ee1a9c3609082909c7a97967e96856b00ca9bfedfe2a602b30a",
    "0014_chat_destinations": "32a48962554e2f38fcbfd851aa49881d028f3ba52bd204d260f652ed17f46900",
    "0015_form_messages": "f93b77a0cc49d1393753cce1c204efa656590b777a0bf1b6e847fb758d4952e0",
    "0016_retention": "836f54eabff3cb1d9c46f04039f4f8c2de8bb7dd93e8814385af5ac27d6a2208",
    "0017_invitations": "c1a57e16aab391250731347ad0e6eeadc3a95b025721f4138914570ef99edd71",
    "0018_session_notes": "afa40a9c4cb425db0ff96c822ee4ff3021591d39fd4929ff1150c18650297608",
    "0019_recipient_consent": "cb50cc53fb49728da3d64425e2c0334a5e0a0addbd55cf80eaae392b3a0c8a2b",
    "0020_form_deletion": "16f7fcd32f80b53bd2d961ca063e8278b3be4b9dc8a802c76ccc57ec8159184d",
    "0021_consent_index": "0bd5e7be99c3ade5866803a236c707fce0882e7b6189085e4fbc3cdf1454ddf9",
    "0022_form_created_status": "b394d1efe06947667ca7a824931a44f246f1674432829c47a9320a95ab9aa933",
    "0023_spam_statistics": "1b877699b4d018b0275c3ba47e8a4ccd7f72228ff824aef6d6598d16f8b68a75",
    "0024_spam_reasons": "1a56882517be2719dc224c49381806dd8f66f8fbe6e076e8c2ec4e355792f3ef",
    "0025_akismet_reports": "3bbbdd0783ca2f4bb8e07c094d0f582cc11778fa587931591230cfeec43fc237",
    "0026_search_text_sent": "e47bf2df8ac6a651885470a7149e5b13f8ceded03846c226d980fd035e4a4baa",
}
SQLITE_RELEASED = {
    "0001_initial": "ee484438271300a0f337fb554cdd0cdbb432747378eae0bbe9ab5870e51f315d",
    "0002_outbox_published": "cd1a511ed1f7648327829bd2a547daf6db85a89e5c5d37f78bd5284c01f430bf",
    "0003_delivery": "0a1f028ddbc00c4ba7fd22e55f57c5b984574cc1cc34bcf54d256a869b58c16e",
    "0004_uploads": "91a18ce6d2ddeb525f440f9caec5df663fdba12584fdf965c1971f32a22d1a0f",
    "0005_honeypot_hits": "262833df3f3eda0cbc06e527fbee56b9a1d703add866178a6122337bf35e94f2",
    "0006_storage_ceiling": "fa969ad31404e23dd3e513bbe59b3ad8414209e5addf3103fbf92237075d5392",
    "0007_key_scopes": "d38322c65576c33034f6f5c94839aacef4120232538b83b0396e8f430b00c513",
    # No statement: SQLite's search is a scan (docs/api.md, "Listing and search").
    "0008_submission_search": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "0009_delivery_attempts": "df7b8a877f2e527eb95c06c3d27bc852db92cc52cfe0f380e072bed36b6e4e3b",
    "0010_form_usage": "8315daf07b632066a88ec447048ded6ec881d2779363bf16045d2d49400dce8b",
    "0011_users": "8ee6cc221c85c52c4c82417d7edb06dd9a8234612000ab0f8c487a12078b7356",
    "0012_chat_destinations": "8a96d1de8f33de85bee3a3c8704d2ac991677cb965c84943b73e6f2e49fd6ee3",
    "0013_form_messages": "e2ef260028b48b2ea6e398182760b8b964514f85deb71f56316b4f0f29fd44f3",
    "0014_retention": "000f2661eca3b2d176b535cd317d614c8d3a744d80a5072a60a90dbc81949917",
    "0015_invitations": "50da0512fe5a4048ede04cf7d659ccfe8770b068ccb7a7b70cb46e187bfb8caf",
    "0016_session_notes": "1d950b2d72fddb272430997bc8f11e2d5fc96eab0f75a9fd62f4b976f3787f3c",
    "0017_recipient_consent": "e89e352e7452153acb91768c334769d27396ac4e2d90fd2fe8d64aabf7831848",
    "0018_form_deletion": "05d5cbafaef59b2924225afe4bc12366ef974b7774076825b21ca613af6d410e",
    "0019_consent_index": "0bd5e7be99c3ade5866803a236c707fce0882e7b6189085e4fbc3cdf1454ddf9",
    "0020_form_created_status": "2e5ed7bfb396ea84847eec0de9c915041b3099f2d439fd69734ad0f83cd36529",
    "0021_spam_statistics": "c3f5023a8c21e618c0b1d8503b417de2033e1bb1866945adf6c813d4743259ad",
    "0022_spam_reasons": "f90a847f307b9a87095fc2e6dfdb70bee2b383a670db79a9165f80dd3f34c7d8",
    "0023_akismet_reports": "e0a954117fead3afc250ab43bf83008336caa637a863cad55e0a62321fad6646",
}


def digest(migration: Migration) -> str:
    return hashlib.sha256("\0".join(migration.statements).encode()).hexdigest()


@pytest.mark.parametrize(
    ("migrations", "released"),
    [(PG_MIGRATIONS, PG_RELEASED), (SQLITE_MIGRATIONS, SQLITE_RELEASED)],
    ids=["postgres", "sqlite"],
)
def test_the_released_migrations_send_what_they_sent(
    migrations: tuple[Migration, ...], released: dict[str, str]
) -> None:
    assert {m.name: digest(m) for m in migrations} == released
    assert [m.version for m in migrations] == list(range(1, len(released) + 1))


def test_the_readme_names_the_last_file_that_creates_each_function() -> None:
    folder = files("intake.adapters.postgres").joinpath("migrations")
    last_creating: dict[str, str] = {}
    for migration in PG_MIGRATIONS:
        for statement in migration.statements:
            if found := re.match(r"\s*CREATE FUNCTION (\w+)\(", statement):
                last_creating[found[1]] = f"{migration.name}.sql"
    # A repeatable file, applied after them, holds the live version of what it creates.
    for repeatable in PG_REPEATABLES:
        for statement in repeatable.statements:
            if found := re.match(r"\s*CREATE OR REPLACE FUNCTION (\w+)\(", statement):
                last_creating[found[1]] = f"{repeatable.name}.sql"
    readme = folder.joinpath("README.md").read_text(encoding="utf-8")
    named = dict(re.findall(r"^\| `(\w+)` .*\| `(\S+\.sql)` *\|$", readme, re.MULTILINE))

    assert named == last_creating
    assert set(last_creating) == {
        "intake_commit",
        "intake_commit_many",
        "intake_record_honeypot",
        "intake_forms_changed",
        "intake_search_text",
        "intake_charge_period",
        "intake_fill_search_text",
    }


def test_a_function_with_a_repeatable_file_is_made_by_no_numbered_migration() -> None:
    made_again = {
        found[1]
        for repeatable in PG_REPEATABLES
        for statement in repeatable.statements
        if (found := re.match(r"\s*CREATE OR REPLACE FUNCTION (\w+)\(", statement))
    }
    made_before = [
        (found[1], migration.name)
        for migration in PG_MIGRATIONS
        for statement in migration.statements
        if (found := re.match(r"\s*(?:CREATE|DROP) FUNCTION (\w+)\(", statement))
        and found[1] in made_again
    ]

    # But the first search text: 0010's generated column needs it before the files run.
    assert made_before == [("intake_search_text", "0010_submission_search")]


def test_a_file_is_read_as_its_statements_without_their_comments() -> None:
    text = (
        "-- 0009_example\n\n"
        "-- Why the table.\n"
        "CREATE TABLE t (\n    a integer  -- why the column\n)\n;\n\n"
        "CREATE FUNCTION f() RETURNS integer LANGUAGE plpgsql AS $f$\n"
        "BEGIN\n    RETURN 1;\nEND\n$f$\n;\n"
    )

    assert statements_of(text) == (
        "CREATE TABLE t (\n    a integer  -- why the column\n)",
        "CREATE FUNCTION f() RETURNS integer LANGUAGE plpgsql AS $f$\n"
        "BEGIN\n    RETURN 1;\nEND\n$f$",
    )


def test_a_statement_without_its_closing_line_is_refused() -> None:
    with pytest.raises(ValueError, match="does not end"):
        statements_of("CREATE TABLE t (a integer);\n")
