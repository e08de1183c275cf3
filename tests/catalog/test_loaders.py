"""load_products: every format loads good rows and reports bad ones with the right line."""

from __future__ import annotations

import csv
import json
import textwrap
from decimal import Decimal
from pathlib import Path

import pytest

from cartagent.catalog import LoadReport, Product, RowProblem, load_products, synthetic_catalog


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def lines(report: LoadReport) -> list[int]:
    return [problem.line for problem in report.problems]


def ids(report: LoadReport) -> list[str]:
    return [product.id for product in report.products]


# --- JSON ---------------------------------------------------------------------------------------


def test_a_json_list_loads_good_products_and_reports_each_bad_one_at_its_line(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path,
        "catalog.json",
        """
        [
          {"id": "p1", "title": "Mug", "category": "Home > Kitchen > Mugs",
           "variants": [{"id": "v1", "options": {"color": "red"}, "price": 9.99}]},
          {"id": "p2",
           "title": "",
           "variants": []},
          "not a product",
          {"id": "p3", "title": "Cup", "variants": [{"id": "v1", "price": "a lot"}]},
          {"id": "p1", "title": "Mug again"},
          {"id": "p4", "title": "Plate", "rating": 4.5, "rating_count": 3}
        ]
        """,
    )
    report = load_products(path)
    assert ids(report) == ["p1", "p4"]
    assert report.products[0].variants[0].price == Decimal("9.99")  # read exactly
    assert report.products[0].category == ("Home", "Kitchen", "Mugs")
    assert lines(report) == [4, 7, 8, 9]
    messages = [problem.message for problem in report.problems]
    assert messages[0].startswith("title:")
    assert "expected a product object, got a string" in messages[1]
    assert messages[2].startswith("variants.0.price:")
    assert "already loaded at line 2" in messages[3]


def test_a_json_object_of_products_uses_keys_as_missing_ids(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "catalog.json",
        """
        {
          "p1": {"title": "Mug"},
          "p2": {"id": "p2", "title": "Cup"},
          "p3": {"title": "Plate", "brand": 7}
        }
        """,
    )
    report = load_products(path)
    assert ids(report) == ["p1", "p2"]
    assert report.problems == [RowProblem(4, "brand: Input should be a valid string")]


def test_broken_json_keeps_what_came_before_and_says_where_it_broke(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "catalog.json",
        """
        [
          {"id": "p1", "title": "Mug"},
          {"id": "p2", "title": "Cup"
          {"id": "p3", "title": "Plate"}
        ]
        """,
    )
    report = load_products(path)
    assert ids(report) == ["p1"]
    assert lines(report) == [4]
    assert "invalid JSON" in report.problems[0].message
    assert "nothing after this was read" in report.problems[0].message


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("", 1, "expected a list or an object"),
        ('"products"', 1, "expected a list or an object"),
        ("[]", None, None),
        ("{}\n", None, None),
        ('[{"id": "p", "title": "t"}]\n\n]', 3, "extra data"),
        ('{"p": {"title": "t"} "q": {}}', 1, "expected ',' or '}'"),
        ("{7: {}}", 1, "a product id in quotes"),
    ],
)
def test_json_shapes(tmp_path: Path, text: str, line: int | None, message: str | None) -> None:
    report = load_products(write(tmp_path, "catalog.json", text))
    if line is None:
        assert report.problems == []
    else:
        assert lines(report) == [line]
        assert message is not None and message in report.problems[0].message


# --- JSON Lines ---------------------------------------------------------------------------------


def test_json_lines_report_bad_lines_and_skip_blank_ones(tmp_path: Path) -> None:
    path = tmp_path / "catalog.jsonl"
    path.write_bytes(
        b'{"id": "p1", "title": "Mug", "variants": [{"id": "v", "price": "4.50"}]}\n'
        b"\n"
        b'{"id": "p2", "title": "Cup", "rating": 9}\n'
        b'{"id": "p3", "title": \n'
        b"[1, 2]\n"
        b'{"id": "p4", "title": "Bad \xff byte"}\n'
        b'{"id": "p5", "title": "Plate", "variants": [{"id": "v", "price": 3, "size": "L"}]}\n'
        b'{"id": "p6", "title": "Bowl"}'  # no final newline
    )
    report = load_products(path)
    assert ids(report) == ["p1", "p6"]
    assert lines(report) == [3, 4, 5, 6, 7]
    messages = [problem.message for problem in report.problems]
    assert messages[0].startswith("rating:")
    assert messages[1].startswith("invalid JSON")
    assert "got a list" in messages[2]
    assert "UTF-8" in messages[3]
    assert messages[4].startswith("variants.0.size: Extra inputs are not permitted")


def test_synthetic_products_round_trip_through_json_lines(tmp_path: Path) -> None:
    products = list(synthetic_catalog(200, seed=5))
    path = tmp_path / "catalog.ndjson"
    path.write_text("".join(p.model_dump_json() + "\n" for p in products), encoding="utf-8")
    report = load_products(path)
    assert report.problems == []
    assert report.products == products


# --- CSV ----------------------------------------------------------------------------------------

CSV_HEADER = (
    "id,title,description,brand,category,attributes,price,currency,available,rating,options"
)


def test_csv_rows_with_one_id_merge_into_one_products_variants(tmp_path: Path) -> None:
    fit = json.dumps({"fit": ["baggy"], "material": "denim"})
    rows = [
        CSV_HEADER.split(","),
        ["j1", "Levi's Women's Baggy Jeans", "Roomy", "Levi's", "Clothing > Women > Jeans", fit,
         "59.50", "", "yes", "4.5", '{"size": "30", "color": "blue"}'],
        ["t1", "Crew Tee", "", "Hanes", "Clothing > Men > T-Shirts",
         "material=cotton|polyester;fit=slim", "12", "usd", "", "", "size=M;color=white"],
        ["j1", "", "", "", "", "", "61.00", "", "out of stock", "",
         '{"size": 32, "color": "blue"}'],
        ["t1", "Crew Tee", "", "Hanes", "", "", "12", "", "false", "", "size=L;color=white"],
        ["m1", "Gift Card", "", "", "Gift Cards", "", "", "", "", "", ""],
    ]  # fmt: skip
    path = tmp_path / "catalog.csv"
    with path.open("w", newline="", encoding="utf-8") as file:
        csv.writer(file).writerows(rows)
    report = load_products(path)
    assert report.problems == []
    jeans, tee, card = report.products
    assert jeans.title == "Levi's Women's Baggy Jeans" and jeans.description == "Roomy"
    assert jeans.category == ("Clothing", "Women", "Jeans")
    assert jeans.attributes == {"fit": ("baggy",), "material": ("denim",)}
    assert jeans.rating == 4.5
    assert [(v.id, v.options, v.price, v.available) for v in jeans.variants] == [
        ("j1-1", {"size": "30", "color": "blue"}, Decimal("59.50"), True),
        ("j1-2", {"size": "32", "color": "blue"}, Decimal("61.00"), False),
    ]
    assert tee.attributes == {"material": ("cotton", "polyester"), "fit": ("slim",)}
    assert [v.options["size"] for v in tee.variants] == ["M", "L"]
    assert {v.currency for v in tee.variants} == {"USD"}
    assert card.variants == () and card.category == ("Gift Cards",)


def test_bad_csv_rows_are_reported_at_the_line_they_start_on(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "catalog.csv",
        f"""
        {CSV_HEADER},variant_id,rating_count,colour
        a,Mug,"A mug,
        on two lines",,,,9.99,,,,,a-red,,x
        b,Cup,,,,,ten,,,,,,,
        c,Plate,,,,,3,,maybe,,,,,
        a,Mug,,,,,8.99,,,,,a-red,,
        a,Tumbler,,,,,8.99,,,,,,,
        d,,,,,,1,,,,,,,
        d,Dish,,,,,1,,,,,,,
        ,Nameless,,,,,1,,,,,,,
        e,Bowl,,,,fit,1,,,,,,,
        f,Jug,,,,,1,,,,"{{""size"": [""S"", ""M""]}}",,,
        g,Pot,,,,,1,,,,,,,,,
        a,Mug,,,,,2,eur,,,,,,
        a,Mug,,,,,,,,,,,,
        h,Pan,,,,,1,,,6,,,,
        """,
    )
    report = load_products(path)
    assert ids(report) == ["a"]
    assert [v.id for v in report.products[0].variants] == ["a-red"]
    got = {problem.line: problem.message for problem in report.problems}
    assert list(got) == [1, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
    assert got[1] == "ignored unknown column(s): colour"
    assert got[4].startswith("price:")
    assert got[5].startswith("available: expected true or false")
    assert got[6] == "variant_id: 'a-red' appears twice in product 'a'"
    assert got[7].startswith(
        "title: 'Tumbler' differs from 'Mug' on the product's first row (line 2)"
    )
    assert got[8].startswith("title:")
    assert got[9] == "id: product 'd' was rejected at line 8"
    assert got[10] == "id: missing"
    assert got[11] == "attributes: expected name=value, got 'fit'"
    assert got[12] == "options.size: expected one value, got 2"
    assert got[13] == "has 16 cells, the header has 14"
    assert got[14] == "currency: EUR differs from the product's USD"
    assert got[15] == "price: missing"
    assert got[16].startswith("rating:")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no header row"),
        ("id,title,brand\np,t,b\n", "missing required column(s): price"),
        ("id,title,price,price\n", "duplicated column(s): price"),
    ],
)
def test_a_csv_without_a_usable_header_loads_nothing(
    tmp_path: Path, text: str, message: str
) -> None:
    report = load_products(write(tmp_path, "catalog.csv", text))
    assert report.products == []
    assert lines(report) == [1]
    assert report.problems[0].message.startswith(message)


def test_a_csv_with_a_bom_and_crlf_line_ends_loads(tmp_path: Path) -> None:
    path = tmp_path / "catalog.csv"
    path.write_bytes(b"\xef\xbb\xbfID,Title,Price\r\np1,Mug,3\r\n\r\np2,Cup,x\r\n")
    report = load_products(path)
    assert ids(report) == ["p1"]
    assert lines(report) == [4]


def test_invalid_utf8_in_a_csv_is_reported_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "catalog.csv"
    path.write_bytes(b"id,title,price\np1,Mug,3\np2,Caf\xe9,4\np3,Cup,5\n")
    report = load_products(path)
    assert ids(report) == ["p1"]
    assert report.problems == [
        RowProblem(3, "the file is not valid UTF-8; nothing after this was read")
    ]


# --- Parquet ------------------------------------------------------------------------------------


def test_a_flat_parquet_file_loads_like_a_csv(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table(
        {
            "id": ["p1", "p1", "p2", "p3", "p4"],
            "title": ["Mug", None, "Cup", "Plate", "Bowl"],
            "category": [["Home", "Kitchen"], None, None, None, None],
            "attributes": ['{"material": "ceramic"}', None, None, None, "bad"],
            "price": [9.99, 10.5, -1.0, 3.0, 2.0],
            "available": [True, False, True, None, True],
            "options": [[("size", "S")], [("size", "M")], None, None, None],
        },
        schema=pa.schema(
            [
                ("id", pa.string()),
                ("title", pa.string()),
                ("category", pa.list_(pa.string())),
                ("attributes", pa.string()),
                ("price", pa.float64()),
                ("available", pa.bool_()),
                ("options", pa.map_(pa.string(), pa.string())),
            ]
        ),
    )
    path = tmp_path / "catalog.parquet"
    pq.write_table(table, path)
    report = load_products(path)
    assert ids(report) == ["p1", "p3"]
    mug = report.products[0]
    assert mug.category == ("Home", "Kitchen")
    assert mug.attributes == {"material": ("ceramic",)}
    assert [(v.options, v.price, v.available) for v in mug.variants] == [
        ({"size": "S"}, Decimal("9.99"), True),
        ({"size": "M"}, Decimal("10.5"), False),
    ]
    assert report.products[1].variants[0].available  # a null flag means available
    assert lines(report) == [3, 5]
    assert report.problems[0].message.startswith("price:")
    assert report.problems[1].message.startswith("attributes:")


def test_a_nested_parquet_file_has_a_product_per_row(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    products = list(synthetic_catalog(50, seed=2))
    rows = [p.model_dump(mode="json") for p in products]
    rows[7]["variants"][0]["price"] = "-3"
    table = pa.Table.from_pylist(rows)
    path = tmp_path / "catalog.pq"
    pq.write_table(table, path, row_group_size=16)
    report = load_products(path)
    assert lines(report) == [8]
    assert report.problems[0].message.startswith("variants.0.price:")
    assert report.products == products[:7] + products[8:]


def test_a_file_that_is_not_parquet_is_one_problem(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    path = tmp_path / "catalog.parquet"
    path.write_bytes(b"id,title,price\n")
    report = load_products(path)
    assert report.products == []
    assert lines(report) == [0]
    assert "not a readable Parquet file" in report.problems[0].message


# --- everything ---------------------------------------------------------------------------------


def test_unknown_suffixes_and_missing_files_raise(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="suffix"):
        load_products(tmp_path / "catalog.xml")
    with pytest.raises(FileNotFoundError):
        load_products(tmp_path / "missing.csv")


def test_the_same_products_load_from_every_format(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    products = [
        Product.model_validate(
            {
                "id": "p1",
                "title": "Levi's Women's High-Waist Baggy Denim Jeans",
                "brand": "Levi's",
                "category": ["Clothing", "Women", "Jeans"],
                "attributes": {"fit": ["baggy"], "rise": ["high-waist"]},
                "rating": 4.5,
                "rating_count": 3,
                "variants": [
                    {"id": "p1-1", "options": {"size": "30"}, "price": "59.50"},
                    {"id": "p1-2", "options": {"size": "32"}, "price": "61", "available": False},
                ],
            }
        )
    ]
    rows = [p.model_dump(mode="json") for p in products]
    (tmp_path / "c.json").write_text(json.dumps(rows))
    (tmp_path / "c.jsonl").write_text("\n".join(json.dumps(row) for row in rows))
    flat = [
        {
            "id": p.id, "title": p.title, "description": p.description, "brand": p.brand,
            "category": " > ".join(p.category), "attributes": json.dumps(p.attributes),
            "price": str(v.price), "currency": v.currency, "available": v.available,
            "rating": p.rating, "rating_count": p.rating_count,
            "options": json.dumps(v.options), "variant_id": v.id,
        }
        for p in products
        for v in p.variants
    ]  # fmt: skip
    pq.write_table(pa.Table.from_pylist(flat), tmp_path / "c.parquet")
    header = list(flat[0])
    csv_lines = [",".join(header)] + [
        ",".join(json.dumps(str(row[c]) if row[c] is not None else "") for c in header)
        for row in flat
    ]
    (tmp_path / "c.csv").write_text("\n".join(line.replace('\\"', '""') for line in csv_lines))
    for name in ("c.json", "c.jsonl", "c.csv", "c.parquet"):
        report = load_products(tmp_path / name)
        assert report.problems == [], name
        assert report.products == products, name


def test_a_row_with_many_errors_gets_a_short_message(tmp_path: Path) -> None:
    row = {"id": "p", "title": "Mug", "variants": [{"id": str(i), "price": -1} for i in range(50)]}
    path = tmp_path / "catalog.jsonl"
    path.write_text(json.dumps(row))
    (problem,) = load_products(path).problems
    assert problem.message.count("variants.") == 5
    assert problem.message.endswith("; and 45 more")


def test_a_csv_image_column_is_the_products_picture(tmp_path: Path) -> None:
    path = tmp_path / "catalog.csv"
    path.write_text(
        "id,title,price,image\n"
        "m1,Mug,9.50,pictures/m1.png\n"
        "m1,Mug,10.50,\n"
        "m2,Cup,4.00,../outside.png\n"
    )
    report = load_products(path)
    [mug] = report.products
    assert mug.image == "pictures/m1.png" and len(mug.variants) == 2
    [problem] = report.problems
    assert problem.line == 4 and "image must be" in problem.message
