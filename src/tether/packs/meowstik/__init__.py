"""The `meowstik` pack: seed 000's web_search, file_put and custom tool types.

    from tether.packs.meowstik import BraveSearch, DuckDuckGoSearch, meowstik_tools

    tools = meowstik_tools(search=DuckDuckGoSearch(), roots=["work"], custom={"weather": weather})

`web_search(query, maxTokens)` asks a pluggable backend (DuckDuckGo's HTML page needs no key; the Brave
Search API needs one, `TETHER_BRAVE_API_KEY` for the registered pack) and cuts the results to fit
`maxTokens`, estimated at four characters a token. `file_put` writes into the workspace roots; `custom`
runs the user's own tools by name. Seed 000's `search` and `file_ingest` are the knowledge pack's
(`tether.knowledge`, with the knowledge base they work on), Drive uploads the google pack's `file_upload`. web_search needs the google extra (httpx).
"""

from tether.packs.meowstik._pack import MEOWSTIK_PACK as MEOWSTIK_PACK
from tether.packs.meowstik._search import BraveSearch as BraveSearch
from tether.packs.meowstik._search import DuckDuckGoSearch as DuckDuckGoSearch
from tether.packs.meowstik._search import SearchBackend as SearchBackend
from tether.packs.meowstik._search import SearchResult as SearchResult
from tether.packs.meowstik._tools import meowstik_tools as meowstik_tools

__all__ = [
    "MEOWSTIK_PACK",
    "BraveSearch",
    "DuckDuckGoSearch",
    "SearchBackend",
    "SearchResult",
    "meowstik_tools",
]
