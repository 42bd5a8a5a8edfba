"""What the JSON-shaped reports' tests share: strict parsing (no NaN/Infinity tokens) and schema validation."""

import json


def strict_loads(text: str):
    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")

    return json.loads(text, parse_constant=refuse)


def assert_valid(validator, document):
    errors = sorted(validator.iter_errors(document), key=lambda error: list(error.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])
