"""The weather tool as a Python function: the schema comes from the type hints and the docstring."""

from typing import Annotated, Literal

from pydantic import Field

from tether import tool


@tool(side_effects="none")
def get_weather(
    city: str,
    days: Annotated[int, Field(ge=1, le=10)] = 1,
    unit: Literal["c", "f"] = "c",
) -> dict[str, float]:
    """Forecast the weather for a city.

    Args:
        city: The city, e.g. "Lisbon".
        days: How many days to forecast.
        unit: Celsius (c) or Fahrenheit (f).
    """
    return {"high": 21.0, "low": 14.0}
