"""What the tables hold while someone edits a mechanism. Qt-free.

A `MechanismDraft` is a `RobotDraft` whose rows are every link of every chain, in
joint order (the file's chain order, then each chain's links); each `Row` carries
the name of its chain. Next to the rows it keeps what the link tables do not show:
each chain's name, parent and base placement (`ChainHead`), the loops and the
assembly settings.

The rows are validated cell by cell exactly as a serial arm's (core's
`validate_link`). When every cell is valid, the whole mechanism is built
(`core.Mechanism`, which closes the loops). If core refuses it (a loop that can no
longer close, a parent cycle, duplicate names), nothing downstream changes: the
last valid mechanism stays, `model_error` holds core's message (it names the loop
or chain), and the cells of the last edit are marked with it, so the person who
typed the value sees why in place.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from core import Assembly, Chain, Link, Loop, Mechanism, MechanismError, Placement, Robot

from .draft import RobotDraft, Row, Value, new_link

__all__ = ["ChainHead", "MechanismDraft", "draft_for", "MODEL_ERROR_KEY"]

#: The key of `errors` for a model error that no cell was edited for (a load, undo of
#: a row insert): row -1, so it sorts first and no table shows it in a cell.
MODEL_ERROR_KEY = (-1, "mechanism")


@dataclass(frozen=True)
class ChainHead:
    """A chain without its links: name, the link it starts on (None: the base) and the
    pose of its frame 0 (in the base frame, or in the parent link's frame)."""

    name: str
    parent: str | None = None
    base: Placement = Placement()

    @classmethod
    def of(cls, chain: Chain) -> "ChainHead":
        return cls(chain.name, chain.parent, chain.base)


@dataclass
class MechanismDraft(RobotDraft):
    """The edit state of a mechanism (see the module docstring).

    heads       : the chains in file order (their rows are `rows` with that `chain`)
    loops       : the loop (cut) joints, as core's `Loop`
    assembly    : the assembly settings, as core's `Assembly`
    model_error : core's reason why the valid cells make no mechanism, or ""
    """

    heads: list[ChainHead] = field(default_factory=list)
    loops: tuple[Loop, ...] = ()
    assembly: Assembly = Assembly()
    model_error: str = ""
    _touched: list[tuple[int, str]] = field(default_factory=list, repr=False)

    @classmethod
    def from_mechanism(cls, mech: Mechanism) -> "MechanismDraft":
        rows = [Row.from_link(link, chain.name) for chain in mech.chains for link in chain.links]
        return cls(mech, rows, heads=[ChainHead.of(c) for c in mech.chains],
                   loops=tuple(mech.loops), assembly=mech.assembly)

    # ----- reading ----------------------------------------------------------------
    def chain_rows(self, name: str) -> list[int]:
        """Row indices of the chain called `name`, in order."""
        return [i for i, row in enumerate(self.rows) if row.chain == name]

    def chain_of_row(self, row: int) -> str | None:
        return self.rows[row].chain if 0 <= row < self.n else None

    def link_name(self, row: int) -> str:
        name = self.rows[row].cells["name"]
        return name if isinstance(name, str) and name else f"link {row + 1}"

    # ----- rows -------------------------------------------------------------------
    def new_row(self, index: int) -> Row:
        """A new link for the chain of the row at `index` (the last chain at the end),
        with a name no other link has."""
        chain = self.chain_of_row(index) if index < self.n else (
            self.rows[-1].chain if self.rows else (self.heads[-1].name if self.heads else None))
        taken = {str(r.cells["name"]) for r in self.rows}
        k = self.n + 1
        while f"link {k}" in taken:
            k += 1
        link = replace(new_link(self.robot.links), name=f"link {k}")
        return Row.from_link(link, chain)

    def can_move(self, src: int, dst: int) -> bool:
        """Rows move only within their chain (joint order follows the chains)."""
        return (super().can_move(src, dst)
                and self.rows[src].chain == self.rows[dst].chain)

    # ----- editing ----------------------------------------------------------------
    def set_cells(self, changes: list[tuple[int, str, Value]]) -> bool:
        self._touched = [(row, key) for row, key, _ in changes]
        try:
            return super().set_cells(changes)
        finally:
            self._touched = []

    def set_structure(self, heads: list[ChainHead] | None = None,
                      loops: tuple[Loop, ...] | None = None,
                      assembly: Assembly | None = None) -> bool:
        """Replace the chain heads, loops or assembly settings (None: keep), then
        revalidate. A renamed chain keeps its rows (heads are matched by position)."""
        if heads is not None:
            renames = {old.name: new.name for old, new in zip(self.heads, heads, strict=True)}
            for row in self.rows:
                row.chain = renames.get(row.chain, row.chain)
            self.heads = list(heads)
        if loops is not None:
            self.loops = tuple(loops)
        if assembly is not None:
            self.assembly = assembly
        return self.revalidate()

    # ----- validation -------------------------------------------------------------
    def revalidate(self) -> bool:
        self.model_error = ""
        return super().revalidate()

    def _candidate(self, links: list[Link]) -> Mechanism | None:
        """The mechanism of the valid rows, or None with core's reason in
        `model_error` and on the cells of the last edit."""
        old = self.robot
        chains = [Chain(h.name, tuple(link for link, row in zip(links, self.rows, strict=True)
                                      if row.chain == h.name), h.parent, h.base)
                  for h in self.heads]
        try:
            return Mechanism(name=old.name, chains=tuple(chains), loops=self.loops,
                             gravity=old.gravity, description=old.description,
                             angle_unit=old.angle_unit, assembly=self.assembly)
        except MechanismError as err:
            self.model_error = str(err)
            cells = [c for c in self._touched if c[0] >= 0] or [MODEL_ERROR_KEY]
            for cell in cells:
                self.errors[cell] = self.model_error
            return None


def draft_for(model: Robot | Mechanism) -> RobotDraft:
    """The draft that edits `model`: a `MechanismDraft` for a Mechanism."""
    if isinstance(model, Mechanism):
        return MechanismDraft.from_mechanism(model)
    return RobotDraft.from_robot(model)
