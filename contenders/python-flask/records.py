"""Study 002's record, typed: decoded from the downstream's JSON or a database row."""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Data:
    id: int
    value: str
    active: bool
    props: list[str]

    @classmethod
    def from_json(cls, obj):
        """The record from decoded JSON; ValueError when it is not one."""
        if not isinstance(obj, dict):
            raise ValueError("not a JSON object")
        try:
            rec = cls(id=obj["id"], value=obj["value"], active=obj["active"], props=obj["props"])
        except KeyError as e:
            raise ValueError(f"no {e.args[0]!r}") from None
        rec.check()
        return rec

    def check(self):
        if type(self.id) is not int:
            raise ValueError("id is not an integer")
        if not isinstance(self.value, str):
            raise ValueError("value is not a string")
        if type(self.active) is not bool:
            raise ValueError("active is not a boolean")
        if not isinstance(self.props, list) or not all(isinstance(p, str) for p in self.props):
            raise ValueError("props is not a list of strings")
