"""Word lists the rule parser uses, in one place.

Each table maps a canonical value to the surface forms (lower case) that mean it. Multi-word forms
are matched before shorter ones. Canonical values are what lands in a :class:`SearchQuery`.
A few common Spanish, French, German, Italian and Portuguese forms are included so that simple
non-English requests still yield colours, categories and prices.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ATTRIBUTE_WORDS",
    "AVAILABILITY_CUES",
    "BRANDS",
    "CATEGORIES",
    "CJK_PRICE_MAX_CUES",
    "CJK_PRICE_MAX_PREFIXES",
    "CJK_PRICE_MIN_CUES",
    "CJK_PRICE_MIN_PREFIXES",
    "COLORS",
    "CURRENCY_WORDS",
    "FOLLOW_UP_MARKERS",
    "FOLLOW_UP_OPENERS",
    "GENDERS",
    "LETTER_SIZED_CATEGORIES",
    "MATERIALS",
    "NEGATION_CUES",
    "NO",
    "PRICE_MAX_CUES",
    "PRICE_MIN_CUES",
    "PROTECTED_WORDS",
    "SIZED_CATEGORIES",
    "SIZE_WORDS",
    "SORT_CUES",
    "STOPWORDS",
    "UNITS",
    "YES",
]

COLORS: Final[dict[str, tuple[str, ...]]] = {
    "black": (
        "black",
        "negro",
        "negra",
        "negros",
        "negras",
        "noir",
        "noire",
        "noirs",
        "noires",
        "schwarze",
        "schwarzer",
        "schwarzes",
        "schwarz",
        "schwarzen",
        "nero",
        "nera",
        "preto",
    ),
    "white": (
        "white",
        "blanco",
        "blanca",
        "blancos",
        "blancas",
        "blanc",
        "blanche",
        "blancs",
        "blanches",
        "weisse",
        "weiße",
        "weiss",
        "weiß",
        "weißer",
        "weißen",
        "weißes",
        "bianco",
        "branco",
    ),
    "red": (
        "red",
        "rojo",
        "roja",
        "rojos",
        "rojas",
        "rouge",
        "rouges",
        "rot",
        "rote",
        "roter",
        "roten",
        "rotes",
        "rosso",
        "rossa",
        "vermelho",
    ),
    "blue": (
        "blue",
        "azul",
        "azules",
        "bleu",
        "bleue",
        "bleus",
        "blau",
        "blaue",
        "blauer",
        "blauen",
        "blaues",
        "blu",
    ),
    "navy": ("navy", "navy blue", "bleu marine"),
    "light blue": ("light blue", "baby blue", "sky blue"),
    "dark blue": ("dark blue",),
    "green": (
        "green",
        "verde",
        "verdes",
        "vert",
        "verte",
        "verts",
        "grün",
        "grüne",
        "grüner",
        "grünen",
        "grünes",
        "gruen",
    ),
    "olive": ("olive", "olive green"),
    "dark green": ("dark green", "forest green"),
    "yellow": (
        "yellow",
        "amarillo",
        "amarilla",
        "jaune",
        "jaunes",
        "gelb",
        "gelbe",
        "gelber",
        "gelben",
        "gelbes",
        "giallo",
        "amarelo",
    ),
    "orange": ("orange", "naranja", "arancione", "laranja"),
    "purple": ("purple", "morado", "violet", "violett", "lila", "viola", "roxo"),
    "pink": ("pink", "rosa", "rose pink"),
    "brown": (
        "brown",
        "marrón",
        "marron",
        "braun",
        "braune",
        "brauner",
        "braunen",
        "braunes",
        "marrone",
        "tan",
        "camel",
    ),
    "beige": ("beige", "khaki", "cream", "ivory", "off white", "off-white"),
    "gray": (
        "gray",
        "grey",
        "gris",
        "grise",
        "grises",
        "grau",
        "graue",
        "grauer",
        "grauen",
        "graues",
        "grigio",
        "cinza",
        "charcoal",
    ),
    "space gray": ("space gray", "space grey"),
    "silver": ("silver", "plateado", "argent", "silber", "argento"),
    "gold": ("gold", "golden", "dorado", "doré", "oro"),
    "rose gold": ("rose gold",),
    "burgundy": ("burgundy", "maroon", "wine red"),
    "teal": ("teal", "turquoise", "aqua"),
    "multicolor": ("multicolor", "multicolored", "multi-colored", "multi colored", "rainbow"),
}

# The colours that are shades of another: "nothing blue" rules out navy too.
SHADES: Final[dict[str, tuple[str, ...]]] = {
    "blue": ("navy", "light blue", "dark blue"),
    "green": ("olive", "dark green"),
    "gray": ("space gray", "charcoal"),
    "red": ("burgundy",),
    "pink": ("rose gold",),
}

MATERIALS: Final[dict[str, tuple[str, ...]]] = {
    "leather": ("leather", "cuero", "cuir", "leder", "pelle", "couro", "genuine leather"),
    "faux leather": ("faux leather", "vegan leather", "pu leather", "synthetic leather"),
    "suede": ("suede",),
    "denim": ("denim", "jean fabric"),
    "cotton": ("cotton", "algodón", "algodon", "coton", "baumwolle", "cotone", "algodão"),
    "organic cotton": ("organic cotton",),
    "linen": ("linen", "lino", "leinen"),
    "wool": ("wool", "lana", "laine", "wolle", "merino", "merino wool"),
    "cashmere": ("cashmere",),
    "silk": ("silk", "seda", "soie", "seide", "seta"),
    "polyester": ("polyester", "poliéster"),
    "nylon": ("nylon",),
    "spandex": ("spandex", "elastane", "lycra"),
    "fleece": ("fleece",),
    "canvas": ("canvas",),
    "mesh": ("mesh",),
    "rubber": ("rubber", "natural rubber"),
    "plastic": ("plastic", "plástico", "plastique", "plastik"),
    "metal": ("metal",),
    "aluminum": ("aluminum", "aluminium"),
    "stainless steel": ("stainless steel", "stainless", "steel"),
    "iron": ("iron", "cast iron"),
    "glass": ("glass", "vidrio", "verre", "glas"),
    "ceramic": ("ceramic", "ceramics", "porcelain"),
    "wood": ("wood", "wooden", "madera", "bois", "holz", "legno"),
    "bamboo": ("bamboo",),
    "silicone": ("silicone",),
    "memory foam": ("memory foam",),
    "down": ("goose down", "down filled", "down-filled"),
    # Blends and named fabrics: one value each, so "not recycled polyester" excludes the blend
    # rather than wanting polyester and excluding the word "recycled".
    "recycled polyester": ("recycled polyester",),
    "recycled nylon": ("recycled nylon",),
    "cotton blend": ("cotton blend",),
    "wool blend": ("wool blend",),
    "spandex blend": ("spandex blend",),
    "stretch denim": ("stretch denim",),
    "organic cotton denim": ("organic cotton denim",),
    "carbon steel": ("carbon steel",),
    "faux fur": ("faux fur",),
    "french terry": ("french terry",),
    "microfiber": ("microfiber", "microfibre"),
    "velvet": ("velvet",),
    "satin": ("satin",),
    "sateen": ("sateen",),
    "percale": ("percale",),
    "boucle": ("boucle", "bouclé"),
    "alpaca": ("alpaca",),
    "cork": ("cork",),
    "pvc": ("pvc",),
    "tpe": ("tpe",),
    "eva": ("eva", "eva foam"),
    "synthetic": ("synthetic",),
}

# Product-level descriptors other than material and gender: key -> canonical -> surface forms.
ATTRIBUTE_WORDS: Final[dict[str, dict[str, tuple[str, ...]]]] = {
    "fit": {
        "baggy": ("baggy", "baggy fit", "loose fit", "loose-fit", "oversized"),
        "slim": ("slim fit", "slim-fit", "slim"),
        "skinny": ("skinny", "skinny fit"),
        "relaxed": ("relaxed fit", "relaxed"),
        "regular": ("regular fit", "classic fit"),
        "straight": ("straight leg", "straight-leg", "straight fit"),
        "bootcut": ("bootcut", "boot cut", "boot-cut"),
        "wide leg": ("wide leg", "wide-leg"),
    },
    "waist": {
        "high": (
            "high waist",
            "high-waist",
            "high waisted",
            "high-waisted",
            "high rise",
            "high-rise",
        ),
        "mid": ("mid waist", "mid rise", "mid-rise"),
        "low": ("low waist", "low rise", "low-rise"),
    },
    "sleeve": {
        "long": ("long sleeve", "long sleeves", "long sleeved", "long-sleeve", "long-sleeved"),
        "short": (
            "short sleeve",
            "short sleeves",
            "short sleeved",
            "short-sleeve",
            "short-sleeved",
        ),
        "sleeveless": ("sleeveless",),
    },
    "style": {
        "v-neck": ("v-neck", "v neck", "vneck"),
        "crew neck": ("crew neck", "crew-neck", "crewneck"),
        "hooded": ("hooded",),
    },
    "connectivity": {
        "wireless": ("wireless", "cordless"),
        "bluetooth": ("bluetooth",),
        "wired": ("wired",),
        "wi-fi": ("wi-fi", "wifi"),
    },
    "type": {
        "over-ear": ("over-ear", "over ear"),
        "in-ear": ("in-ear", "in ear"),
        "on-ear": ("on-ear", "on ear"),
        "mechanical": ("mechanical",),
        "analog": ("analog", "analogue"),
        "digital": ("digital",),
        "electric": ("electric",),
        "manual": ("manual",),
        "french press": ("french press",),
        "robotic": ("robotic", "robot"),
    },
    "features": {
        "waterproof": ("waterproof", "water-proof", "water resistant", "water-resistant"),
        "noise cancelling": (
            "noise cancelling",
            "noise-cancelling",
            "noise canceling",
            "noise-canceling",
            "anc",
        ),
        "polarized": ("polarized", "polarised"),
        "rechargeable": ("rechargeable",),
        "organic": ("organic",),
        "vegan": ("vegan",),
    },
}

GENDERS: Final[dict[str, tuple[str, ...]]] = {
    "women": ("women", "women's", "womens", "woman", "woman's", "ladies", "lady", "female",
              "womans", "mujer", "femme", "damen", "donna"),
    "men": ("men", "men's", "mens", "man", "man's", "male", "gentlemen", "hombre", "homme",
            "herren", "uomo"),
    "unisex": ("unisex",),
    "girls": ("girls", "girl's", "girl", "girls'"),
    "boys": ("boys", "boy's", "boy", "boys'"),
    "kids": ("kids", "kid's", "kids'", "children", "children's", "child", "niños", "enfants",
             "kinder"),
    "baby": ("baby", "infant", "toddler", "bebé", "bébé"),
}  # fmt: skip

# Canonical category -> surface forms (plurals included).
CATEGORIES: Final[dict[str, tuple[str, ...]]] = {
    # apparel
    "jeans": ("jeans", "jean", "denims", "vaqueros", "jean pants"),
    "t-shirt": ("t-shirt", "t-shirts", "tshirt", "tshirts", "t shirt", "t shirts", "tee",
                "tees", "camiseta", "camisetas"),
    "shirt": ("shirt", "shirts", "button-down", "button down", "blouse", "blouses", "camisa",
              "chemise", "hemd"),
    "hoodie": ("hoodie", "hoodies", "hooded sweatshirt", "sudadera"),
    "sweatshirt": ("sweatshirt", "sweatshirts"),
    "sweater": ("sweater", "sweaters", "jumper", "pullover", "cardigan", "suéter"),
    "jacket": ("jacket", "jackets", "chaqueta", "veste", "jacke", "giacca"),
    "fleece jacket": ("fleece jacket", "fleece jackets"),
    "coat": ("coat", "coats", "parka", "abrigo", "manteau", "mantel"),
    "dress": ("dress", "dresses", "vestido", "kleid"),
    "skirt": ("skirt", "skirts", "falda", "jupe"),
    "pants": ("pants", "trousers", "chinos", "pantalones", "pantalon"),
    "leggings": ("leggings", "yoga pants"),
    "shorts": ("shorts",),
    "socks": ("socks", "sock", "calcetines", "chaussettes", "socken"),
    "underwear": ("underwear", "boxers", "briefs"),
    "swimsuit": ("swimsuit", "swimsuits", "bikini", "swimwear", "swim trunks"),
    "pajamas": ("pajamas", "pyjamas", "pjs"),
    "hat": ("hat", "hats", "cap", "caps", "beanie", "sombrero", "chapeau"),
    "scarf": ("scarf", "scarves"),
    "gloves": ("gloves", "glove", "mittens"),
    # footwear
    "running shoes": ("running shoes", "running shoe", "runners", "trainers"),
    "sneakers": ("sneakers", "sneaker", "tennis shoes", "zapatillas", "baskets", "turnschuhe"),
    "hiking boots": ("hiking boots", "hiking boot"),
    "boots": ("boots", "boot", "botas", "bottes", "stiefel"),
    "sandals": ("sandals", "sandal", "flip flops", "flip-flops", "sandalias"),
    "shoes": ("shoes", "shoe", "oxfords", "loafers", "zapatos", "chaussures", "schuhe", "scarpe"),
    "slippers": ("slippers", "slipper"),
    # bags and accessories
    "backpack": ("backpack", "backpacks", "rucksack", "mochila", "sac à dos", "rucksäcke"),
    "handbag": ("handbag", "handbags", "purse", "purses", "tote", "tote bag", "bolso"),
    "bag": ("bag", "bags", "duffel", "duffel bag", "messenger bag"),
    "wallet": ("wallet", "wallets", "cartera"),
    "luggage set": ("luggage set", "luggage sets", "luggage", "suitcase", "suitcases"),
    "sunglasses": ("sunglasses", "sun glasses", "shades", "gafas de sol", "lunettes de soleil"),
    "wristwatch": ("wristwatch", "wristwatches", "watch", "watches", "reloj", "montre", "uhr"),
    "smart watch": ("smart watch", "smart watches", "smartwatch", "smartwatches"),
    "perfume": ("perfume", "perfumes", "fragrance", "cologne", "parfum"),
    "makeup kit": ("makeup kit", "makeup kits", "makeup set", "make-up kit"),
    # electronics
    "laptop": ("laptop", "laptops", "notebook computer", "portátil", "ordinateur portable"),
    "tablet": ("tablet", "tablets", "ipad", "tableta", "tablette"),
    "phone case": ("phone case", "phone cases", "iphone case", "iphone cases"),
    "smartphone": ("smartphone", "smartphones", "phone", "phones", "cell phone", "mobile phone",
                   "teléfono", "téléphone"),
    "e-reader": ("e-reader", "e-readers", "ereader", "ereaders", "kindle", "ebook reader",
                 "ebook readers", "e-book reader", "e-book readers", "electronic reader",
                 "electronic readers", "e-ink reader"),
    "headphones": ("headphones", "headphone", "headset", "auriculares", "casque"),
    "wireless earbuds": ("wireless earbuds", "earbuds", "earbud", "earphones"),
    "bluetooth speaker": ("bluetooth speaker", "bluetooth speakers", "speaker", "speakers",
                          "altavoz"),
    "gaming mouse": ("gaming mouse", "mouse", "mice"),
    "mechanical keyboard": ("mechanical keyboard", "mechanical keyboards", "keyboard",
                            "keyboards", "teclado"),
    "action camera": ("action camera", "action cameras", "gopro"),
    "digital camera": ("digital camera", "digital cameras"),
    # Generic nouns stay generic: every camera (or kettle) title holds the word.
    "camera": ("camera", "cameras", "cámara"),
    "indoor security camera": ("indoor security camera", "security camera", "security cameras"),
    "portable charger": ("portable charger", "portable chargers", "power bank", "power banks"),
    "smart thermostat": ("smart thermostat", "thermostat", "thermostats"),
    "led light bulb": ("led light bulb", "led light bulbs", "light bulb", "light bulbs",
                       "bulb", "bulbs"),
    # home and kitchen
    "coffee maker": ("coffee maker", "coffee makers", "coffee machine", "cafetera"),
    "espresso machine": ("espresso machine", "espresso machines", "espresso maker"),
    "electric kettle": ("electric kettle", "electric kettles"),
    "tea kettle": ("tea kettle", "tea kettles"),
    "kettle": ("kettle", "kettles"),
    "water bottle": ("water bottle", "water bottles", "bottle", "bottles", "botella"),
    "desk lamp": ("desk lamp", "desk lamps", "lamp", "lamps", "lámpara", "lampe"),
    "wall clock": ("wall clock", "wall clocks", "clock", "clocks"),
    "bookshelf": ("bookshelf", "bookshelves", "bookcase"),
    "office chair": ("office chair", "office chairs", "desk chair", "chair", "chairs", "silla"),
    "air purifier": ("air purifier", "air purifiers"),
    "vacuum cleaner": ("vacuum cleaner", "vacuum cleaners", "vacuum", "hoover", "aspiradora"),
    "grill": ("grill", "grills", "bbq", "barbecue"),
    "patio umbrella": ("patio umbrella", "patio umbrellas"),
    "umbrella": ("umbrella", "umbrellas", "paraguas"),
    "garden hose": ("garden hose", "garden hoses", "hose"),
    "pet bed": ("pet bed", "pet beds", "dog bed", "dog beds", "cat bed", "cat beds"),
    "electric toothbrush": ("electric toothbrush", "electric toothbrushes"),
    "toothbrush": ("toothbrush", "toothbrushes"),
    "notebook": ("notebook", "notebooks", "journal", "cuaderno"),
    "jigsaw puzzle": ("jigsaw puzzle", "jigsaw puzzles", "puzzle", "puzzles"),
    # sports
    "yoga mat": ("yoga mat", "yoga mats"),
    "dumbbell set": ("dumbbell set", "dumbbell sets", "dumbbells", "dumbbell", "weights"),
    "bicycle": ("bicycle", "bicycles", "bike", "bikes", "bicicleta", "vélo", "fahrrad"),
    "cycling helmet": ("cycling helmet", "cycling helmets", "bike helmet", "bicycle helmet",
                       "helmet", "helmets"),
    "skateboard": ("skateboard", "skateboards"),
}  # fmt: skip

# The same kinds as shoppers name them in Spanish, German and French: the parser reads each
# as the English kind, and the catalog's vocabulary places that on the catalog's own kinds.
_KINDS_ABROAD: Final[dict[str, tuple[str, ...]]] = {
    "electric kettle": ("wasserkocher", "bouilloire", "bouilloire électrique", "hervidor",
                        "hervidor eléctrico"),
    "sunglasses": ("sonnenbrille", "sonnenbrillen"),
    "coffee maker": ("kaffeemaschine", "kaffeemaschinen", "cafetière", "cafetières"),
    "wall clock": ("wanduhr", "wanduhren", "horloge murale", "horloge", "reloj de pared"),
    "vacuum cleaner": ("staubsauger", "aspirateur", "aspirateurs", "aspiradoras"),
    "dumbbell set": ("hanteln", "hantel", "kurzhanteln", "haltères", "haltère", "mancuernas",
                     "mancuerna"),
    "pet bed": ("hundebett", "katzenbett", "cama para perro", "cama para gato",
                "lit pour chien", "lit pour chat"),
    "e-reader": ("liseuse", "liseuses", "lector de libros electrónicos"),
    "smart watch": ("reloj inteligente", "montre connectée", "montres connectées"),
    "headphones": ("kopfhörer",),
    "luggage set": ("kofferset", "koffer", "valises", "valise", "maletas", "juego de maletas"),
    "fleece jacket": ("fleecejacke", "fleecejacken", "polaire", "polaires", "forro polar"),
    "yoga mat": ("yogamatte", "yogamatten", "tapis de yoga", "esterilla de yoga", "esterilla"),
    "water bottle": ("trinkflasche", "wasserflasche", "thermosflasche", "gourde", "termo",
                     "botella de agua"),
    "indoor security camera": ("überwachungskamera", "caméra de surveillance",
                               "cámara de seguridad", "cámara de vigilancia"),
    "action camera": ("actioncam", "action-cam", "caméra sportive", "cámara deportiva"),
    "air purifier": ("luftreiniger", "purificateur d'air", "purificateur",
                     "purificador de aire", "purificador"),
    "desk lamp": ("schreibtischlampe", "lampe de bureau", "lámpara de escritorio"),
    "office chair": ("bürostuhl", "chaise de bureau", "silla de oficina"),
    "electric toothbrush": ("elektrische zahnbürste", "zahnbürste", "brosse à dents électrique",
                            "cepillo de dientes eléctrico"),
    "hiking boots": ("wanderschuhe", "wanderstiefel", "chaussures de randonnée",
                     "botas de montaña", "botas de senderismo"),
    "portable charger": ("powerbank", "batterie externe", "cargador portátil"),
    "makeup kit": ("kit de maquillaje", "schminkset", "kit de maquillage"),
    "skateboard": ("monopatín",),
    "patio umbrella": ("sonnenschirm", "parasol", "sombrilla"),
    "cycling helmet": ("fahrradhelm", "casque de vélo", "casco de bicicleta", "casco"),
    "mechanical keyboard": ("mechanische tastatur", "tastatur", "clavier mécanique", "clavier",
                            "teclado mecánico"),
    "gaming mouse": ("maus", "souris", "ratón"),
    "digital camera": ("digitalkamera", "appareil photo", "cámara digital"),
    "bluetooth speaker": ("lautsprecher", "enceinte", "enceinte bluetooth"),
    "wireless earbuds": ("in-ear-kopfhörer", "écouteurs", "écouteurs sans fil",
                         "auriculares inalámbricos"),
    "espresso machine": ("espressomaschine", "machine à espresso", "cafetera espresso"),
    "notebook": ("notizbuch", "carnet", "cahier", "libreta"),
    "smart thermostat": ("thermostat intelligent", "termostato"),
    "grill": ("parrilla",),
    "led light bulb": ("glühbirne", "ampoule", "bombilla"),
    "jigsaw puzzle": ("rompecabezas",),
    "tea kettle": ("teekessel", "tetera"),
    "running shoes": ("laufschuhe", "chaussures de course", "zapatillas de correr",
                      "zapatillas para correr", "zapatillas de running"),
    "bicycle": ("rennrad", "mountainbike", "bici"),
}  # fmt: skip
for _kind, _forms in _KINDS_ABROAD.items():
    CATEGORIES[_kind] = (*CATEGORIES[_kind], *_forms)

# Words of other languages for what a catalog writes in English, read as those English words
# before anything else ("Holzkohle, mittlere Größe" asks for a charcoal grill, size medium; "sans
# sac" for a bagless vacuum). English -> German, French and Spanish forms (inflections spelt out).
# Only words that are not English words themselves ("large" is wide in French; "hell" is bright).
GLOSSES: Final[dict[str, tuple[str, ...]]] = {
    # sizes
    "small": ("klein", "kleine", "kleinen", "kleiner", "kleines", "petit", "petits", "petites",
              "petite taille", "pequeño", "pequeña", "pequeños", "pequeñas", "pequeno",
              "pequena"),
    "medium": ("mittel", "mittlere", "mittleren", "mittlerer", "mittleres", "mittelgroß",
               "mittelgroße", "mittelgroßen", "moyen", "moyenne", "moyens", "moyennes",
               "taille moyenne", "mediano", "mediana", "medianos", "medianas"),
    "large": ("groß", "große", "großen", "großer", "großes", "gross", "grosse", "grossen",
              "grande", "grands", "grandes", "grande taille", "talla grande"),
    "size": ("größe", "grösse", "groesse", "taille", "talla", "tamaño", "tamano"),
    # connectivity and power
    "wireless": ("kabellos", "kabellose", "kabellosen", "kabelloser", "kabelloses",
                 "inalámbrico", "inalámbrica", "inalámbricos", "inalámbricas", "inalambrico",
                 "inalambrica", "sin cable", "sin cables", "ohne kabel"),
    "wired": ("kabel", "mit kabel", "kabelgebunden", "kabelgebundene", "kabelgebundenen",
              "filaire", "filaires", "avec fil", "con cable", "con cables"),
    "cordless": ("sans fil", "akku", "akkustaubsauger", "sin cordón"),
    "battery": ("batterie", "batería", "bateria"),
    # features
    "waterproof": ("wasserdicht", "wasserdichte", "wasserdichten", "wasserdichter",
                   "wasserfest", "wasserfeste", "étanche", "étanches", "impermeable",
                   "impermeables", "sumergible", "sumergibles",
                   # what a use says of the thing it needs: it goes under water
                   "snorkeling", "snorkelling", "snorkel", "scuba", "underwater",
                   "sous l'eau", "bajo el agua", "unter wasser", "unterwasser"),
    "polarized": ("polarisiert", "polarisierte", "polarisierten", "polarisé", "polarisée",
                  "polarisés", "polarisées", "polarizado", "polarizada", "polarizados",
                  "polarizadas"),
    "quiet": ("leise", "leisen", "leiser", "silencieux", "silencieuse", "silencieuses",
              "silencioso", "silenciosa", "silenciosos", "silenciosas", "light sleeper"),
    "rotisserie": ("rôtissoire", "drehspieß", "drehspiess", "asador giratorio", "rostizador"),
    "timer": ("minuterie", "zeitschaltuhr", "temporizador", "programmateur"),
    "built-in grinder": ("mahlwerk", "broyeur intégré", "moulin intégré", "molinillo"),
    "bagless": ("sans sac", "beutellos", "beutellose", "beutellosen", "beutelloser",
                "sin bolsa"),
    "bagged": ("avec sac", "mit beutel", "con bolsa"),
    "adjustable": ("verstellbar", "verstellbare", "verstellbaren", "réglable", "réglables",
                   "ajustable", "ajustables", "regulable", "regulables"),
    "ventilation high": ("gut belüftet", "gut belüftete", "gut belüfteten", "bien ventilé",
                         "bien aéré", "buena ventilación", "bien ventilado"),
    "pet hair": ("tierhaare", "tierhaaren", "poils d'animaux", "poils", "pelo de mascota",
                 "pelos de mascota", "pelo de perro", "pelo de gato"),
    # kinds of a kind
    "charcoal": ("holzkohle", "holzkohlegrill", "charbon", "charbon de bois", "carbón",
                 "carbon vegetal"),
    "electric": ("elektrisch", "elektrische", "elektrischen", "elektrischer", "électrique",
                 "électriques", "eléctrico", "eléctrica", "eléctricos", "eléctricas"),
    "analog": ("analoge", "analogen", "analoger", "analogique", "analogiques", "analógico",
               "analógica", "analógicos", "analógicas"),
    "digital": ("digitale", "digitalen", "digitaler", "numérique", "numériques"),
    "french press coffee maker": ("cafetière à piston", "stempelkanne", "prensa francesa"),
    "french press": ("à piston",),
    "drip": ("filterkaffeemaschine", "filterkaffee", "goutte à goutte", "de goteo", "goteo"),
    "capsule": ("kapsel", "kapseln", "kapselmaschine", "capsules", "cápsula", "cápsulas"),
    "road bicycle": ("rennrad", "rennräder", "vélo de route", "bici de carretera",
                     "bicicleta de carretera", "bicicleta de ruta"),
    "mountain": ("vtt", "montaña", "montagne"),
    "bicycle": ("bici", "bicis", "bicicleta", "bicicletas", "velo", "vélo", "vélos", "fahrrad",
                "fahrräder", "fahrrads"),
    "bike helmet": ("casco de bici", "casco de bicicleta", "casque de vélo", "casque vélo",
                    "fahrradhelm", "radhelm"),
    "helmet": ("helm", "casque", "casco", "cascos"),
    "over-ear": ("de diadema", "diadema", "arceau", "ohrumschließend"),
    "in-ear": ("de botón", "intra-auriculaires", "intra-auriculaire"),
    "upright": ("bodenstaubsauger", "balai"),
    # materials
    "iron": ("eisen", "gusseisen", "fer", "fonte", "hierro"),
    "stainless steel": ("edelstahl", "acier inoxydable", "inox", "acero inoxidable",
                        "inoxidable"),
    "metal": ("metall", "métal", "métallique", "metálico", "metálica"),
    "rubber": ("gummi", "caoutchouc", "goma", "caucho"),
    "natural rubber": ("naturkautschuk", "caoutchouc naturel", "caucho natural"),
    "fleece": ("en polaire", "de polaire", "forro polar"),
    "memory foam": ("memoryschaum", "viscoschaum", "mousse à mémoire de forme",
                    "mousse à mémoire", "espuma viscoelástica", "viscoelástica"),
    "mesh": ("netzstoff", "maille", "malla"),
    "canvas": ("leinwand", "toile", "lona"),
    "ceramic": ("keramik", "céramique", "cerámica", "ceramica"),
    "plastic": ("kunststoff",),
    "bamboo": ("bambus", "bambou", "bambú"),
    "hardshell": ("hartschale", "hartschalen", "coque rigide", "rigide", "rígida", "rígido"),
    "softshell": ("weichschale", "souple", "blanda", "blando"),
    # levels, skin, scent
    "beginner": ("anfänger", "anfängerin", "einsteiger", "débutant", "débutante",
                 "débutants", "principiante", "principiantes"),
    "expert": ("experte", "experten", "experto", "experta"),
    "intermediate": ("fortgeschritten", "fortgeschrittene", "intermédiaire", "intermedio"),
    "woody": ("boisé", "boisée", "holzig", "holzige", "amaderado", "amaderada"),
    "light skin": ("helle haut", "heller haut", "peau claire", "piel clara", "fair skin",
                   "pale skin", "fair skinned", "pale skinned"),
    "dark skin": ("dunkle haut", "dunkler haut", "peau foncée", "piel oscura"),
    "full zip": ("zip intégral", "fermeture éclair intégrale", "cremallera completa",
                 "durchgehender reißverschluss", "durchgehendem reißverschluss"),
    "half zip": ("demi-zip", "demi zip", "media cremallera", "halber reißverschluss",
                 "halbem reißverschluss"),
    # what people call a thing by its maker's or the trade's name
    "apple homekit": ("siri", "apple home"),
    "80%": ("tenkeyless", "tkl"),
    "camera": ("cam",),
    # "keep my tea hot": a vacuum flask, which is steel
    "insulated stainless steel bottle": ("thermos", "vacuum flask", "keep my tea hot",
                                         "keep my coffee hot", "keep my tea warm",
                                         "keep my coffee warm", "keep my drink cold",
                                         "keep my drinks cold", "keep my water cold"),
    "laptop compartment": ("laptopfach", "notebookfach", "compartiment ordinateur",
                           "compartimento para portátil"),
    # option names, as questions about the results ask for them ("Welche Farbe hat der?")
    "color": ("farbe", "couleur"),
    "material": ("matière", "matériau"),
    "thickness": ("dick", "dicke", "épaisseur", "épais", "épaisse", "grosor", "grueso",
                  "gruesa"),
    "field of view": ("blickwinkel", "sichtfeld", "champ de vision", "angle de vue",
                      "campo de visión", "ángulo de visión"),
    "brand": ("marke", "marque", "marca"),
    "difficulty level": ("niveau", "nivel", "schwierigkeit", "schwierigkeitsgrad"),
    "processor": ("prozessor", "processeur", "procesador"),
    "ventilation": ("belüftung", "ventilación"),
    "pieces": ("teile", "pièces", "piezas"),
    "zipper": ("reißverschluss", "reissverschluss", "fermeture éclair", "cremallera"),
    "capacity": ("kapazität", "fassungsvermögen", "capacité", "capacidad"),
    "resolution": ("auflösung", "résolution", "resolución"),
    "battery life": ("akkulaufzeit", "autonomie", "autonomía"),
    "cheap": ("barato", "barata", "baratos", "baratas", "económico", "económica", "günstig",
              "günstige", "günstigen", "günstiger", "billig", "billige", "billigen", "pas cher",
              "pas chère", "pas chers", "bon marché"),
    # units and measures
    "cups": ("tassen", "tasses", "tazas"),
    "cup": ("tasse", "taza"),
    "inch": ("zoll", "pouce", "pouces", "pulgada", "pulgadas"),
    "screen": ("bildschirm", "écran", "pantalla"),
    "storage": ("speicher", "stockage", "almacenamiento"),
    "diameter": ("durchmesser", "diamètre", "diámetro"),
    "about": ("ungefähr", "etwa", "environ", "aproximadamente"),
}  # fmt: skip

# Categories where a bare number ("sneakers 10.5") is a size.
SIZED_CATEGORIES: Final[frozenset[str]] = frozenset(
    {
        "jeans", "t-shirt", "shirt", "hoodie", "sweatshirt", "sweater", "jacket", "fleece jacket",
        "coat", "dress", "skirt", "pants", "leggings", "shorts", "socks", "underwear",
        "swimsuit", "pajamas", "gloves", "running shoes", "sneakers", "hiking boots", "boots",
        "sandals", "shoes", "slippers",
    }
)  # fmt: skip
# Of those, the ones sized S, M, L...: "a large t-shirt" asks for size L, "large boots" do not.
LETTER_SIZED_CATEGORIES: Final[frozenset[str]] = SIZED_CATEGORIES - {
    "running shoes", "sneakers", "hiking boots", "boots", "sandals", "shoes", "slippers"
}  # fmt: skip

# How a catalog writes the values of a yes/no option ("waterproof: yes").
YES: Final[frozenset[str]] = frozenset({"yes", "true", "y"})
NO: Final[frozenset[str]] = frozenset({"no", "false", "n"})

# Named sizes -> canonical size value.
SIZE_WORDS: Final[dict[str, tuple[str, ...]]] = {
    "XXS": ("xxs", "2xs"),
    "XS": ("xs", "x-small", "extra small", "extra-small", "xsmall"),
    "S": ("small",),
    "M": ("medium",),
    "L": ("large",),
    "XL": ("xl", "x-large", "extra large", "extra-large", "xlarge"),
    "XXL": ("xxl", "2xl", "xx-large", "2x-large", "xxlarge"),
    "3XL": ("3xl", "xxxl", "3x-large", "xxx-large"),
    "4XL": ("4xl", "xxxxl", "4x-large"),
    "5XL": ("5xl", "5x-large"),
}

# Unit surface form -> (option key, canonical unit).
UNITS: Final[dict[str, tuple[str, str]]] = {
    "fl oz": ("capacity", "fl oz"), "fl. oz": ("capacity", "fl oz"),
    "fluid ounce": ("capacity", "fl oz"), "fluid ounces": ("capacity", "fl oz"),
    "oz": ("capacity", "oz"), "ounce": ("capacity", "oz"), "ounces": ("capacity", "oz"),
    "ml": ("capacity", "ml"), "milliliter": ("capacity", "ml"), "milliliters": ("capacity", "ml"),
    "millilitre": ("capacity", "ml"), "millilitres": ("capacity", "ml"),
    "l": ("capacity", "l"), "liter": ("capacity", "l"), "liters": ("capacity", "l"),
    "litre": ("capacity", "l"), "litres": ("capacity", "l"),
    "litro": ("capacity", "l"), "litros": ("capacity", "l"),
    "gallon": ("capacity", "gal"), "gallons": ("capacity", "gal"), "gal": ("capacity", "gal"),
    "cup": ("capacity", "cup"), "cups": ("capacity", "cup"),
    "mah": ("capacity", "mah"),
    "lb": ("weight", "lb"), "lbs": ("weight", "lb"), "pound": ("weight", "lb"),
    "pounds": ("weight", "lb"), "kg": ("weight", "kg"), "kilo": ("weight", "kg"),
    "libras": ("weight", "lb"), "libra": ("weight", "lb"), "pfund": ("weight", "lb"),
    "kilos": ("weight", "kg"), "kilogram": ("weight", "kg"), "kilograms": ("weight", "kg"),
    "g": ("weight", "g"), "gram": ("weight", "g"), "grams": ("weight", "g"),
    "inch": ("length", "inch"), "incher": ("length", "inch"), "inches": ("length", "inch"),
    "in": ("length", "inch"),
    "zoll": ("length", "inch"), "pulgadas": ("length", "inch"), "pulgada": ("length", "inch"),
    "pouces": ("length", "inch"), "pouce": ("length", "inch"),
    "\"": ("length", "inch"), "ft": ("length", "ft"), "feet": ("length", "ft"),
    "foot": ("length", "ft"), "cm": ("length", "cm"), "mm": ("length", "mm"),
    "gb": ("storage", "gb"), "tb": ("storage", "tb"),
    "w": ("power", "w"), "watt": ("power", "w"), "watts": ("power", "w"),
    "mp": ("resolution", "mp"), "megapixel": ("resolution", "mp"),
    "megapixels": ("resolution", "mp"),
    "pack": ("pack", "pack"), "packs": ("pack", "pack"), "pk": ("pack", "pack"),
    "count": ("pack", "pack"), "ct": ("pack", "pack"), "pcs": ("pack", "pack"),
    "pc": ("pack", "pack"),
    "piece": ("pieces", "pieces"), "pieces": ("pieces", "pieces"),
}  # fmt: skip

# Words that open an exclusion ("not leather", "without a hood", "no red").
NEGATION_CUES: Final[tuple[str, ...]] = (
    "anything but", "other than", "except for", "except", "excluding", "exclude", "without",
    "but not", "not", "no", "avoid", "nothing", "sin", "sans", "ohne", "senza", "sem",
    "don't want", "dont want", "do not want", "isn't", "isnt", "aren't", "arent", "is not",
    "are not", "nor", "nada de", "nicht", "kein", "keine", "keinen", "auf keinen fall",
    "pas de", "pas en", "surtout pas", "pas", "sauf", "außer", "ausser", "nichts", "excepto",
    "salvo", "i hate", "hate", "allergic to", "i dislike",
)  # fmt: skip
# Every word of a cue is dropped from the text that is searched: a cue must not hold a word that
# names products ("not a fan of" would drop "fan" from "a ceiling fan").

PRICE_MAX_CUES: Final[tuple[str, ...]] = (
    "under", "below", "less than", "cheaper than", "lower than", "at most", "up to", "max",
    "maximum", "no more than", "not more than", "not over", "within", "below", "<", "<=",
    "≤", "menos de", "moins de", "unter", "sotto", "meno di", "budget of", "budget is", "budget",
    "por menos de", "por debajo de", "pour moins de", "für unter", "fuer unter", "für höchstens",
    "go to", "go up to", "stretch to", "stretch up to", "can spend", "höchstens", "maximal",
    "jusqu'à", "hasta",
)  # fmt: skip

PRICE_MIN_CUES: Final[tuple[str, ...]] = (
    "over", "above", "more than", "greater than", "higher than", "at least", "min", "minimum",
    "starting at", "from", "no less than", "not less than", ">", ">=", "≥", "más de", "plus de",
    "über", "ueber", "sopra",
)  # fmt: skip

# Currency words and symbols -> ISO code.
CURRENCY_WORDS: Final[dict[str, str]] = {
    "$": "USD", "usd": "USD", "dollar": "USD", "dollars": "USD", "bucks": "USD", "buck": "USD",
    "dólares": "USD", "dólar": "USD", "dollari": "USD",
    "€": "EUR", "eur": "EUR", "euro": "EUR", "euros": "EUR",
    "£": "GBP", "gbp": "GBP", "pound sterling": "GBP", "quid": "GBP",
    "¥": "JPY", "jpy": "JPY", "yen": "JPY", "円": "JPY", "日元": "JPY",
    "cny": "CNY", "rmb": "CNY", "yuan": "CNY", "元": "CNY", "块": "CNY", "人民币": "CNY",
    "cad": "CAD", "aud": "AUD",
}  # fmt: skip

# Chinese and Japanese price cues: written without spaces, so matched apart from the others.
CJK_PRICE_MAX_CUES: Final[tuple[str, ...]] = ("以下", "以内", "之内", "未満")
CJK_PRICE_MAX_PREFIXES: Final[tuple[str, ...]] = ("低于", "少于", "不超过", "不到", "不高于")
CJK_PRICE_MIN_CUES: Final[tuple[str, ...]] = ("以上",)
CJK_PRICE_MIN_PREFIXES: Final[tuple[str, ...]] = ("高于", "超过", "多于", "不低于", "至少")

SORT_CUES: Final[dict[str, tuple[str, ...]]] = {
    "price_asc": ("cheapest", "lowest price", "least expensive", "lowest priced",
                  "cheapest first", "price low to high", "sort by price", "sorted by price",
                  "order by price", "ordered by price", "by lowest price", "price ascending",
                  "sort by price low to high", "sorted by price low to high",
                  "by price low to high",
                  "más barato", "moins cher", "billigste"),
    "price_desc": ("most expensive", "priciest", "highest price", "highest priced",
                   "price high to low", "most premium", "by highest price", "price descending",
                   "most expensive first", "sort by price high to low",
                   "sorted by price high to low", "by price high to low"),
    "rating": ("best rated", "top rated", "top-rated", "highest rated", "best reviewed",
               "best-rated", "highly rated", "well reviewed", "best reviews", "sort by rating",
               "sorted by rating", "by rating", "by reviews"),
}  # fmt: skip

AVAILABILITY_CUES: Final[tuple[str, ...]] = (
    "in stock", "in-stock", "instock", "in stok", "in stck", "available now", "available today",
    "ready to ship",
    "ships today", "ship today", "can ship now", "currently available", "en stock",
    "auf lager", "disponible", "ship now", "ships now", "buy right now", "buy now",
    "available right now", "on hand", "not sold out", "aren't sold out", "arent sold out",
    "in stock now", "order today", "as long as it's available", "sofort lieferbar",
    "lieferbar", "vorrätig", "en existencia", "disponible ahora", "disponible maintenant",
    "on the shelf", "on the shelves", "send today", "deliver today", "en existencias",
    "disponibles", "verfügbar",
)  # fmt: skip

# A request opening with one of these refines the previous one ("in blue instead").
FOLLOW_UP_OPENERS: Final[tuple[str, ...]] = (
    "and ", "also ", "only ", "but ", "now ", "in ", "with ", "without ", "for ", "under ",
    "over ", "not ", "no ", "no,", "same ", "make it", "make them", "show me ones",
    "show me the", "ones ", "those", "these", "them", "any in", "cheaper", "something cheaper",
    "actually", "rather", "what if", "what about", "how about", "y en", "et en", "und in",
)  # fmt: skip
# ... and so does one containing one of these anywhere.
FOLLOW_UP_MARKERS: Final[tuple[str, ...]] = (
    "instead", "what about", "how about", "same but", "rather", "as well", "that one",
    "those", "these", "ones",
)  # fmt: skip

# Words dropped from the free text.
STOPWORDS: Final[frozenset[str]] = frozenset(
    """
    a an the i i'm im i'd id me my we our you your it its is are was be been am to of for in on
    at by with and or but that which who this these those some any want wants wanted need needs
    looking look find search show get buy please would like could can should will just also
    really very something one ones thing things item items product products pair pairs of
    hi hello hey thanks thank there here what how about instead only same make them they
    let see give me do does have has had prefer preferred ideally maybe kind sort type
    price priced prices cost costs costing dollars dollar bucks usd size sized sizes color
    colour colors colours in-stock stock available shopping shop store order ordering
    quiero busco je cherche ich suche un una des le la les der die das el los las et y und
    de du ein eine für pour para con avec mit
    while whilst when where whenever so
    choose chosen interested thats that's help helps come comes trying try surely certainly
    actually new
    """.split()  # noqa: SIM905
)

# Canonical brand -> surface forms.
BRANDS: Final[dict[str, tuple[str, ...]]] = {
    "Nike": ("nike",), "Adidas": ("adidas",), "Puma": ("puma",), "Reebok": ("reebok",),
    "New Balance": ("new balance",), "Asics": ("asics",), "Converse": ("converse",),
    "Vans": ("vans",), "Under Armour": ("under armour", "under armor"),
    "Levi's": ("levi's", "levis", "levi"), "Wrangler": ("wrangler",),
    "Calvin Klein": ("calvin klein",), "Tommy Hilfiger": ("tommy hilfiger",),
    "Ralph Lauren": ("ralph lauren", "polo ralph lauren"), "Zara": ("zara",), "H&M": ("h&m",),
    "Uniqlo": ("uniqlo",), "Patagonia": ("patagonia",),
    "The North Face": ("the north face", "north face"), "Columbia": ("columbia",),
    "Carhartt": ("carhartt",), "Champion": ("champion",), "Timberland": ("timberland",),
    "Dr. Martens": ("dr. martens", "dr martens", "doc martens"), "Ray-Ban": ("ray-ban", "rayban",
    "ray ban"), "Oakley": ("oakley",), "Casio": ("casio",), "Seiko": ("seiko",),
    "Fossil": ("fossil",), "Garmin": ("garmin",), "Fitbit": ("fitbit",), "Apple": ("apple",),
    "Samsung": ("samsung",), "Google": ("google",), "Sony": ("sony",), "Bose": ("bose",),
    "JBL": ("jbl",), "Anker": ("anker",), "Logitech": ("logitech",), "Razer": ("razer",),
    "Corsair": ("corsair",), "Dell": ("dell",), "HP": ("hp",), "Lenovo": ("lenovo",),
    "Asus": ("asus",), "Acer": ("acer",), "Microsoft": ("microsoft",), "Canon": ("canon",),
    "Nikon": ("nikon",), "GoPro": ("gopro",), "Philips": ("philips",), "Keurig": ("keurig",),
    "Nespresso": ("nespresso",), "Breville": ("breville",), "De'Longhi": ("delonghi",
    "de'longhi"), "Dyson": ("dyson",), "iRobot": ("irobot",), "Weber": ("weber",),
    "Hydro Flask": ("hydro flask", "hydroflask"), "Yeti": ("yeti",), "Nalgene": ("nalgene",),
    "Contigo": ("contigo",), "Osprey": ("osprey",), "Samsonite": ("samsonite",),
    "Lululemon": ("lululemon",), "Manduka": ("manduka",), "Oral-B": ("oral-b", "oral b"),
}  # fmt: skip

# Ordinary words one letter away from a vocabulary word, never "corrected" as typos.
PROTECTED_WORDS: Final[frozenset[str]] = frozenset(
    """
    table match matches matching batch watcher press pressed presses battle cattle bottled lamps
    shirts shorts shoes boats coats costs hosts posts sneak blues reds greens browns wines
    caps capes tote totes mouse house houses cheaper cheapest larger smaller lighter darker
    chains chair chairs hairs pairs bike likes liked lines liner liners glasses classes
    plastics metals woods goods hoods hooded hooks books boots roots tablets tables cables
    blazer blazers robes
    """.split()  # noqa: SIM905
)


def _lookup(table: dict[str, tuple[str, ...]]) -> dict[str, str]:
    return {form: canonical for canonical, forms in table.items() for form in forms}


# Every written form -> its canonical value, per kind (the rule parser and the training data
# builder read words with these).
COLOR_OF = _lookup(COLORS)
GLOSS_OF = _lookup(GLOSSES)
MATERIAL_OF = _lookup(MATERIALS)
GENDER_OF = _lookup(GENDERS)
CATEGORY_OF = _lookup(CATEGORIES)
BRAND_OF = _lookup(BRANDS)
SIZE_OF = _lookup(SIZE_WORDS)
ATTRIBUTE_OF = {
    form: (key, canonical)
    for key, table in ATTRIBUTE_WORDS.items()
    for canonical, forms in table.items()
    for form in forms
}
UNIT_KEY = {unit: key for key, unit in UNITS.values()}
