"""Concept extraction: deterministic, normalised, names told from sentence openers."""

from __future__ import annotations

from slowave_graph.services.concepts import MAX_CONCEPTS, concept_key, concept_links, extract


def keys(text: str) -> dict[str, str]:
    return {c.key: c.kind for c in extract(text)}


def test_names_and_terms_are_found_and_normalised() -> None:
    found = keys("Caroline read Becoming Nicole by Amy Ellis Nutt after the LGBTQ support group met.")
    assert found["becom nicol"] == "entity" and found["ami elli nutt"] == "entity"
    assert found["lgbtq"] == "entity"  # all capitals: a name wherever it stands
    assert found["support"] == "term" and found["group"] == "term"
    # inflections meet: one concept for painting / paintings / painted
    assert concept_key("Paintings") == concept_key("painted") == concept_key("painting") == "paint"


def test_a_capitalised_sentence_opener_is_not_a_name_but_a_capital_inside_is() -> None:
    found = keys("Yesterday we drove to Italy. Wow, Nuuk was cold!")
    assert "itali" in found and found["itali"] == "entity"
    assert "wow" not in found  # a filler, whatever its case
    assert found.get("drove") == "term"
    assert keys("Melanie went camping.").get("melani") == "term"


def test_stop_words_calendar_words_and_numbers_are_not_concepts() -> None:
    found = keys("On Monday, 8 May 2023 at 1:56 pm the 3 of us went for it and did it again.")
    assert not {"monday", "mai", "pm", "the", "it", "2023", "8"} & set(found)
    assert "I" not in {c.name for c in extract("Then I left, and I met Samantha and I laughed.")}


def test_a_run_of_names_stops_at_pronouns_and_punctuation() -> None:
    names = {c.name for c in extract("Then Samantha and I were at McGee's bar; Bank of America called.")}
    assert "Samantha" in names and "McGee's" in names and "Bank of America" in names
    assert not any(" I" in n or "and" in n for n in names)


def test_each_key_once_entities_first_and_bounded() -> None:
    text = (
        " ".join(f"word{chr(97 + i % 26)}{chr(97 + i // 26)}x" for i in range(80)) + " in Italy, near Italy"
    )
    found = extract(text)
    assert len(found) == MAX_CONCEPTS and len({c.key for c in found}) == len(found)
    assert found[0].kind == "entity" and found[0].key == "itali"


def test_links_come_in_lock_order_one_row_per_concept_naming_memories_by_position() -> None:
    links = concept_links(
        [("s:b", "Pottery with the kids"), ("s:a", "Pottery class on Italy trips"), ("s:b", "pottery kids")]
    )
    order = [(link["scope"], link["key"]) for link in links]
    assert order == sorted(order) and len(order) == len(set(order))
    by = {(link["scope"], link["key"]): link for link in links}
    assert [m["position"] for m in by[("s:b", "potteri")]["mentions"]] == [0, 2]  # type: ignore[index]
    assert by[("s:a", "itali")]["kind"] == "entity" and by[("s:a", "itali")]["name"] == "Italy"
