"""The row parsers every reader shares (local loaders and Spark): one row, one id, flat rows."""

from __future__ import annotations

from collections.abc import Iterator

from cartagent.catalog import Product, RowProblem
from cartagent.catalog.rows import (
    ProductIds,
    flat_products,
    json_document,
    physical_lines,
    product_from_row,
)


def test_a_nested_row_is_a_product_or_the_reason_it_is_not() -> None:
    product = product_from_row(3, {"id": "p1", "title": "Mug"})
    assert isinstance(product, Product) and product.id == "p1"
    assert product_from_row(4, ["p1"]) == RowProblem(4, "expected a product object, got a list")
    problem = product_from_row(5, {"id": "p2"})
    assert isinstance(problem, RowProblem) and problem.message.startswith("title:")


def test_a_second_product_with_an_id_is_refused_with_the_first_line() -> None:
    ids = ProductIds()
    assert ids.repeated(2, "p1") is None
    assert ids.repeated(3, "p2") is None
    assert ids.repeated(7, "p1") == RowProblem(7, "id: product 'p1' already loaded at line 2")
    assert ids.repeated(8, "p1") == RowProblem(8, "id: product 'p1' already loaded at line 2")


def test_a_flat_product_is_handed_on_once_its_last_row_and_earlier_products_are_read() -> None:
    rows = [
        (2, {"id": "a", "title": "A", "price": "1"}),
        (3, {"id": "b", "title": "B", "price": "2"}),
        (4, {"id": "a", "price": "3"}),
        (5, {"id": "c", "title": "C", "price": "4"}),
    ]
    read: list[int] = []

    def source() -> Iterator[tuple[int, dict[str, str]]]:
        for line, row in rows:
            read.append(line)
            yield line, row

    seen = []
    for item in flat_products(source(), {"a": 4, "b": 3, "c": 5}):
        assert isinstance(item, Product)
        seen.append((item.id, read[-1], len(item.variants)))
    # b is whole at line 3 but waits for a, which started first
    assert seen == [("a", 4, 2), ("b", 4, 1), ("c", 5, 1)]


def test_without_last_lines_flat_products_come_at_the_end_after_every_problem() -> None:
    rows = [
        (2, {"id": "a", "title": "A", "price": "1"}),
        (3, {"id": "a", "title": "Other", "price": "2"}),
        (4, RowProblem(4, "has 2 cells, the header has 3")),
    ]
    items = list(flat_products(rows))
    assert [type(item).__name__ for item in items] == ["RowProblem", "RowProblem", "Product"]
    assert [item.line for item in items[:2] if isinstance(item, RowProblem)] == [3, 4]


def test_a_json_document_is_read_up_to_bytes_that_are_not_utf8_counting_lines_after_a_bom() -> None:
    data = b'\xef\xbb\xbf[\n{"id": "a", "title": "A"},\n{"id": "b", "title": "B"},\n\xff]'
    items = list(json_document(data))
    assert items[0] == RowProblem(4, "the file is not valid UTF-8; nothing after this was read")
    assert [line for line, _ in items[1:3]] == [2, 3]
    assert isinstance(items[3], RowProblem) and items[3].line == 3


def test_physical_lines_cut_where_the_csv_module_counts_a_line() -> None:
    assert physical_lines("a,b\r\n") == ["a,b\r\n"]
    assert physical_lines("a\rb\r\rc\n") == ["a\r", "b\r", "\r", "c\n"]
    assert physical_lines("a\r") == ["a\r"]
