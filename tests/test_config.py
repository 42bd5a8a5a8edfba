import pytest

from curvedoc.config import find_config, load_config, parse_role_option
from curvedoc.errors import CurvedocError


def test_pyproject_tool_table_is_found_from_a_subfolder(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.curvedoc]\nnum_classes = 10\n[tool.curvedoc.roles]\nval_loss = "my/tag"\n'
    )
    (tmp_path / "deep" / "er").mkdir(parents=True)
    config = find_config(tmp_path / "deep" / "er")
    assert config.roles == {"val_loss": "my/tag"} and config.num_classes == 10


def test_curvedoc_toml_takes_top_level_keys_and_wins_over_pyproject(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.curvedoc]\nnum_classes = 3\n")
    (tmp_path / "curvedoc.toml").write_text("num_classes = 5\n")
    assert find_config(tmp_path).num_classes == 5


def test_pyproject_without_a_curvedoc_table_is_ignored(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert find_config(tmp_path).roles == {}


@pytest.mark.parametrize("text,message", [
    ("[tool.curvedoc]\nnum_classes = 1\n", "num_classes"),
    ('[tool.curvedoc.roles]\nval_los = "x"\n', "unknown role 'val_los'"),
    ("[tool.curvedoc\n", "not valid TOML"),
])
def test_bad_config_is_a_one_line_error_naming_the_file(tmp_path, text, message):
    path = tmp_path / "pyproject.toml"
    path.write_text(text)
    with pytest.raises(CurvedocError, match=message) as error:
        load_config(path)
    assert str(path) in str(error.value) and "\n" not in str(error.value)


def test_role_option():
    assert parse_role_option("val_loss=eval/my loss") == ("val_loss", "eval/my loss")
    with pytest.raises(CurvedocError, match="ROLE=TAG"):
        parse_role_option("val_loss")
    with pytest.raises(CurvedocError, match="unknown role"):
        parse_role_option("validation=x")
