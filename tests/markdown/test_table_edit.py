"""kb_edit_table planning (contract §6): the seven actions, selectors, values, refusals."""

from __future__ import annotations

import pytest

from local_vector_search_mcp.errors import Conflict, ConflictReason, InvalidArgument
from local_vector_search_mcp.markdown import parse_text
from local_vector_search_mcp.markdown.table_edit import CellUpdate, RowMatch, TableEdit, edit_table, escape_cell_text

TABLE = "Intro\n\n| Name | Qty |\n|:-----|----:|\n| apple | 1 |\n| pear |  |\n\nAfter\n"


def run(text: str, edit: TableEdit, pointer: str = "t1") -> str:
    doc = parse_text(text)
    element = doc.get(pointer)
    assert element is not None
    return edit_table(doc, element, edit)


def test_update_cells_splices_only_the_cell_and_escapes_text() -> None:
    edit = TableEdit(
        "update_cells",
        updates=[
            CellUpdate("a|b*", row_index=0, column="Name"),
            CellUpdate("9", where=RowMatch("pear", column="Name"), column_index=1),
        ],
    )
    assert run(TABLE, edit) == TABLE.replace("| apple | 1 |", "| a\\|b\\* | 1 |").replace("| pear |  |", "| pear | 9 |")


def test_update_cells_markdown_format() -> None:
    edit = TableEdit(
        "update_cells", updates=[CellUpdate("**x**", row_index=0, column_index=0, value_format="markdown")]
    )
    assert "| **x** | 1 |" in run(TABLE, edit)
    bad = TableEdit("update_cells", updates=[CellUpdate("x|y", row_index=0, column_index=0, value_format="markdown")])
    with pytest.raises(InvalidArgument, match="unescaped"):
        run(TABLE, bad)


def test_update_of_a_row_missing_cells_re_renders_the_row() -> None:
    text = "| a | b |\n|---|---|\n| 1 |\n"
    out = run(text, TableEdit("update_cells", updates=[CellUpdate("2", row_index=0, column_index=1)]))
    assert out == "| a | b |\n|---|---|\n| 1 | 2 |\n"


def test_escape_cell_text() -> None:
    assert escape_cell_text("a&<b>\\|*_`[]!~#") == "a&amp;&lt;b&gt;\\\\\\|\\*\\_\\`\\[\\]\\!\\~\\#"


def test_identity_edit_is_a_no_op() -> None:
    assert run(TABLE, TableEdit("update_cells", updates=[CellUpdate("apple", row_index=0, column_index=0)])) == TABLE
    assert run(TABLE, TableEdit("set_alignment", column_index=0, alignment="left")) == TABLE


def test_insert_row_then_delete_restores_the_bytes() -> None:
    for text in (TABLE, TABLE.replace("\n", "\r\n"), "| a |\n|---|\n| 1 |"):
        doc = parse_text(text)
        rows = len(doc.text.splitlines()) - 2 - (4 if "Intro" in text else 0)
        for before in (None, 0):
            grown = run(
                text, TableEdit("insert_row", values=["x"] * (2 if "Name" in text else 1), before_row_index=before)
            )
            index = rows if before is None else 0
            assert run(grown, TableEdit("delete_row", row_index=index)) == text


def test_insert_row_values_by_column_and_position() -> None:
    out = run(TABLE, TableEdit("insert_row", values_by_column={"Qty": "5"}, before_row_index=0))
    assert "|:-----|----:|\n|  | 5 |\n| apple | 1 |" in out


def test_insert_row_markdown_format_writes_the_cells_verbatim() -> None:
    # a settings table's rows hold `code`: as text they came out escaped (decision 1027)
    out = run(TABLE, TableEdit("insert_row", values=["`plum`", "[2](p.md)"], value_format="markdown"))
    assert "| pear |  |\n| `plum` | [2](p.md) |\n" in out
    out = run(
        TABLE,
        TableEdit("insert_row", values_by_column={"Name": "**fig**"}, before_row_index=1, value_format="markdown"),
    )
    assert "| apple | 1 |\n| **fig** |  |\n| pear |" in out
    assert "\\`plum\\`" in run(TABLE, TableEdit("insert_row", values=["`plum`", "2"]))  # text: escaped, as before
    with pytest.raises(InvalidArgument, match="unescaped"):
        run(TABLE, TableEdit("insert_row", values=["a|b", "1"], value_format="markdown"))
    with pytest.raises(InvalidArgument, match="valueFormat"):
        run(TABLE, TableEdit("delete_row", row_index=0, value_format="markdown"))


def test_delete_row_by_where() -> None:
    out = run(TABLE, TableEdit("delete_row", where=RowMatch("apple", column_index=0)))
    assert "apple" not in out and "| pear |  |\n\nAfter" in out


def test_insert_and_delete_column() -> None:
    out = run(
        TABLE, TableEdit("insert_column", name="Note", default_value="-", alignment="center", before_column_index=1)
    )
    assert "| Name | Note | Qty |\n| :----- | :---: | ----: |\n| apple | - | 1 |" in out
    assert run(TABLE, TableEdit("delete_column", column="Qty")).startswith("Intro\n\n| Name |\n| :----- |\n| apple |")
    plain = "a | b\n--|--\n1 | 2\n"
    assert run(plain, TableEdit("delete_column", column_index=0)) == "| b |\n| -- |\n| 2 |\n"


def test_rename_and_set_alignment() -> None:
    assert "| Name | Count |\n" in run(TABLE, TableEdit("rename_column", column="Qty", new_name="Count"))
    assert "|:-----|:----|" in run(TABLE, TableEdit("set_alignment", column_index=1, alignment="left"))
    assert "|:-----|----|" in run(TABLE, TableEdit("set_alignment", column_index=1, alignment="none"))
    assert "| a |\n|:---:|" in run("| a |\n|-|\n", TableEdit("set_alignment", column_index=0, alignment="center"))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (TableEdit("set_alignment", column_index=1, alignment="right", row_index=1), "rowIndex is not valid"),
        (TableEdit("update_cells"), "updates"),
        (TableEdit("update_cells", updates=[CellUpdate("x\ny", row_index=0, column_index=0)]), "line break"),
        (TableEdit("update_cells", updates=[CellUpdate("x\x00", row_index=0, column_index=0)]), "control"),
        (
            TableEdit(
                "update_cells",
                updates=[CellUpdate("x", row_index=0, column_index=0), CellUpdate("y", row_index=0, column="Name")],
            ),
            "both set",
        ),
        (TableEdit("update_cells", updates=[CellUpdate("x", column_index=0)]), "exactly one of rowIndex"),
        (TableEdit("update_cells", updates=[CellUpdate("x", row_index=0)]), "exactly one of column"),
        (TableEdit("update_cells", updates=[CellUpdate("x", row_index=5, column_index=0)]), "out of range"),
        (TableEdit("update_cells", updates=[CellUpdate("x", row_index=0, column_index=5)]), "out of range"),
        (TableEdit("update_cells", updates=[CellUpdate("x", row_index=0, column="Nope")]), "No column"),
        (TableEdit("delete_row", where=RowMatch("kiwi", column_index=0)), "No row"),
        (TableEdit("delete_row", row_index=0, where=RowMatch("apple", column_index=0)), "exactly one"),
        (TableEdit("insert_row", values=["1"]), "values has 1"),
        (TableEdit("insert_row", values=["1", "2"], values_by_column={"Qty": "1"}), "exactly one of values"),
        (TableEdit("insert_row", values=["1", "2"], before_row_index=2), "omit it to append"),
        (TableEdit("insert_column", name="N", before_column_index=2), "out of range"),
        (TableEdit("insert_column", name=" "), "non-blank"),
        (TableEdit("rename_column", column_index=0, new_name=" "), "non-blank"),
        (TableEdit("set_alignment", column_index=0), "alignment"),
    ],
)
def test_refusals(edit: TableEdit, message: str) -> None:
    with pytest.raises(InvalidArgument, match=message):
        run(TABLE, edit)


def test_before_row_index_in_a_table_without_rows_says_so() -> None:
    """Decision 703: the message read "out of range (0..-1)"."""
    with pytest.raises(InvalidArgument) as refused:
        run("| a | b |\n|---|---|\n", TableEdit("insert_row", values=["1", "2"], before_row_index=0))
    assert refused.value.message == (
        "beforeRowIndex 0 is out of range: the table has no data rows; omit it to append a row."
    )


def test_ambiguous_selectors_are_conflicts() -> None:
    text = "| a | a |\n|---|---|\n| 1 | 1 |\n| 1 | 2 |\n"
    with pytest.raises(Conflict, match="columnIndex"):
        run(text, TableEdit("delete_column", column="a"))
    with pytest.raises(Conflict, match="rowIndex"):
        run(text, TableEdit("delete_row", where=RowMatch("1", column_index=0)))


def test_a_rename_may_repeat_a_column_name() -> None:
    # decision 293: duplicate headers are legitimate (GFM, the reference, insert_column allow them);
    # the name then selects neither column (CONFLICT), the index still does, and two columns swap
    # names through a moment of sameness without a temporary name
    text = "| a | b |\n|---|---|\n| 1 | 2 |\n"
    same = run(text, TableEdit("rename_column", column="a", new_name="b"))
    assert same == "| b | b |\n|---|---|\n| 1 | 2 |\n"
    with pytest.raises(Conflict, match="2 columns are named 'b'; select the column by columnIndex") as raised:
        run(same, TableEdit("rename_column", column="b", new_name="a"))
    assert raised.value.reason == ConflictReason.AMBIGUOUS_SELECTOR
    assert run(same, TableEdit("rename_column", column_index=1, new_name="a")) == "| b | a |\n|---|---|\n| 1 | 2 |\n"
    assert run(text, TableEdit("insert_column", name="a")).startswith("| a | b | a |\n")


def test_last_column_cannot_be_deleted() -> None:
    with pytest.raises(InvalidArgument, match="last column"):
        run("| a |\n|---|\n| 1 |\n", TableEdit("delete_column", column_index=0))


def test_table_with_extra_cells_is_refused() -> None:
    with pytest.raises(InvalidArgument, match="editable: false"):
        run("| a |\n|---|\n| 1 | 2 |\n", TableEdit("rename_column", column_index=0, new_name="b"))


def test_section_table_and_crlf() -> None:
    text = "# S\r\n\r\n| a | b |\r\n|---|---|\r\n| 1 | 2 |\r\n"
    out = run(text, TableEdit("insert_row", values=["3", "4"]), "1.t1")
    assert out == text + "| 3 | 4 |\r\n"


def test_setting_a_columns_own_alignment_writes_nothing() -> None:
    """Decision 994: a delimiter cell of one or two dashes (`:--`, `-:`, `:-:`, the common forms)
    set to the alignment it already has was rewritten to three dashes: the file written, the
    table's pointer moved, another agent's pointer made stale, for no visible change."""
    table = "| a | b | c | d |\n| - | :-- | :-: | -: |\n| 1 | 2 | 3 | 4 |\n"
    for index, alignment in enumerate(("none", "left", "center", "right")):
        assert run(table, TableEdit("set_alignment", column_index=index, alignment=alignment)) == table
    assert (
        run(table, TableEdit("set_alignment", column_index=1, alignment="right")).splitlines()[1]
        == "| - | ---: | :-: | -: |"
    )


def test_a_cell_or_name_set_to_the_text_it_shows_writes_nothing() -> None:
    """Decision 1091, from the real-corpus sweep: a cell's or a header's own display text written
    back as text (the default) was escaped (`[0, 29]` -> `\\[0, 29\\]`, `compile!` -> `compile\\!`,
    `total_logs` -> `total\\_logs`) and written: the file changed, the table's pointer moved and
    other agents' pointers went stale, for nothing a reader sees (as 994 for alignments)."""
    table = (  # opensearch-docs geotile-grid.md and ppl appendcol.md, rust-book ch00-00-introduction.md
        "| total_logs | Description |\n| --- | --- |\n"
        "| `precision` | Valid values are in the [0, 29] range. |\n| x | This code does not compile! |\n"
    )
    updates = [
        CellUpdate("Valid values are in the [0, 29] range.", row_index=0, column_index=1),
        CellUpdate("This code does not compile!", row_index=1, column_index=1),
    ]
    assert run(table, TableEdit("update_cells", updates=updates)) == table
    assert run(table, TableEdit("rename_column", column_index=0, new_name="total_logs")) == table
    # what shows differently is still written: markup the text drops, a literal the source lacks
    assert "| precision |" in run(
        table, TableEdit("update_cells", updates=[CellUpdate("precision", row_index=0, column_index=0)])
    )
    assert "| x\\_y |" in run(
        table, TableEdit("update_cells", updates=[CellUpdate("x_y", row_index=1, column_index=0)])
    )
    # one cell kept as written, the other changed: only the changed one is spliced
    both = [updates[0], CellUpdate("It compiles.", row_index=1, column_index=1)]
    assert run(table, TableEdit("update_cells", updates=both)) == table.replace(
        "This code does not compile!", "It compiles."
    )


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (TableEdit("delete_column", column="name"), "The columns are 'Name', 'Qty'; or select one by columnIndex."),
        (TableEdit("insert_row", values_by_column={"qty": "1"}), "No column is named 'qty'; names match exactly"),
        (TableEdit("insert_row", values_by_column={"qty": "1"}), "The columns are 'Name', 'Qty'."),
        (
            TableEdit("delete_row", where=RowMatch("Apple", column="Name")),
            "kb_read from the table's anchor lists its rows",
        ),
        (
            TableEdit("set_alignment", column_index=1, alignment="right", row_index=1),
            "rowIndex is not valid for action set_alignment: omit it (set_alignment takes column, columnIndex, "
            "alignment)",
        ),
        (
            TableEdit("update_cells", updates=[CellUpdate("x", row_index=0, column_index=0)], value_format="markdown"),
            "(update_cells takes updates; each update carries its own valueFormat)",
        ),
    ],
)
def test_a_selector_or_field_that_does_not_fit_is_refused_with_what_does(edit: TableEdit, named: str) -> None:
    """Decision 1119: "No column is named 'name'" left an agent to guess the names (case matters), and
    "Field rowIndex is not valid for action set_alignment" to guess which fields the action takes."""
    with pytest.raises(InvalidArgument) as refused:
        run(TABLE, edit)
    assert named in refused.value.message


def test_a_wide_table_lists_its_first_twelve_column_names() -> None:
    header = "| " + " | ".join(f"c{i}" for i in range(15)) + " |\n|" + "---|" * 15 + "\n"
    with pytest.raises(InvalidArgument) as refused:
        run(header, TableEdit("delete_column", column="C0"))
    assert "'c0', 'c1'" in refused.value.message and "'c11' and 3 more" in refused.value.message
