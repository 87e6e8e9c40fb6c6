"""study.dataset.whole: a file written whole is either the old one or the new one, never half."""

from __future__ import annotations

import pytest

from study.dataset.whole import part_of, replace_whole


def test_a_whole_write_replaces_the_file_only_when_complete(tmp_path):
    target = tmp_path / "pairs.csv"
    replace_whole(target, lambda part: part.write_text("old\n"))
    assert target.read_text() == "old\n" and not part_of(target).exists()

    def dies_halfway(part):
        part.write_text("half of the n")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        replace_whole(target, dies_halfway)
    assert target.read_text() == "old\n"  # the old file, whole
    assert not part_of(target).exists()  # and no leftover beside it
    replace_whole(target, lambda part: part.write_text("new\n"))
    assert target.read_text() == "new\n"
