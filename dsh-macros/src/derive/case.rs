//! serde's `rename_all` conventions, applied exactly as serde applies them (variant names
//! are taken as PascalCase, field names as snake_case).

/// A `rename_all` convention.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

/// The spellings serde accepts, in serde's order.
pub(super) const RULES: &[(&str, RenameRule)] = &[
    ("lowercase", RenameRule::Lower),
    ("UPPERCASE", RenameRule::Upper),
    ("PascalCase", RenameRule::Pascal),
    ("camelCase", RenameRule::Camel),
    ("snake_case", RenameRule::Snake),
    ("SCREAMING_SNAKE_CASE", RenameRule::ScreamingSnake),
    ("kebab-case", RenameRule::Kebab),
    ("SCREAMING-KEBAB-CASE", RenameRule::ScreamingKebab),
];

impl RenameRule {
    pub(crate) fn from_str(s: &str) -> Option<RenameRule> {
        RULES.iter().find(|(n, _)| *n == s).map(|(_, r)| *r)
    }

    pub(crate) fn apply_to_variant(self, variant: &str) -> String {
        match self {
            RenameRule::Pascal => variant.to_owned(),
            RenameRule::Lower => variant.to_ascii_lowercase(),
            RenameRule::Upper => variant.to_ascii_uppercase(),
            RenameRule::Camel => {
                let mut chars = variant.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => String::new(),
                }
            }
            RenameRule::Snake => {
                let mut snake = String::new();
                for (i, ch) in variant.char_indices() {
                    if i > 0 && ch.is_uppercase() {
                        snake.push('_');
                    }
                    snake.push(ch.to_ascii_lowercase());
                }
                snake
            }
            RenameRule::ScreamingSnake => RenameRule::Snake
                .apply_to_variant(variant)
                .to_ascii_uppercase(),
            RenameRule::Kebab => RenameRule::Snake
                .apply_to_variant(variant)
                .replace('_', "-"),
            RenameRule::ScreamingKebab => RenameRule::ScreamingSnake
                .apply_to_variant(variant)
                .replace('_', "-"),
        }
    }

    pub(crate) fn apply_to_field(self, field: &str) -> String {
        match self {
            RenameRule::Lower | RenameRule::Snake => field.to_owned(),
            RenameRule::Upper | RenameRule::ScreamingSnake => field.to_ascii_uppercase(),
            RenameRule::Pascal => {
                let mut pascal = String::new();
                let mut capitalize = true;
                for ch in field.chars() {
                    if ch == '_' {
                        capitalize = true;
                    } else if capitalize {
                        pascal.push(ch.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        pascal.push(ch);
                    }
                }
                pascal
            }
            RenameRule::Camel => {
                let pascal = RenameRule::Pascal.apply_to_field(field);
                let mut chars = pascal.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => String::new(),
                }
            }
            RenameRule::Kebab => field.replace('_', "-"),
            RenameRule::ScreamingKebab => field.to_ascii_uppercase().replace('_', "-"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RenameRule::*;

    #[test]
    fn variants_follow_serde() {
        let cases = [
            (
                "Outcome", "outcome", "OUTCOME", "Outcome", "outcome", "outcome", "OUTCOME",
                "outcome", "OUTCOME",
            ),
            (
                "VeryTasty",
                "verytasty",
                "VERYTASTY",
                "VeryTasty",
                "veryTasty",
                "very_tasty",
                "VERY_TASTY",
                "very-tasty",
                "VERY-TASTY",
            ),
            ("A", "a", "A", "A", "a", "a", "A", "a", "A"),
            (
                "Z42", "z42", "Z42", "Z42", "z42", "z42", "Z42", "z42", "Z42",
            ),
        ];
        for (orig, lower, upper, pascal, camel, snake, screaming, kebab, sk) in cases {
            assert_eq!(Lower.apply_to_variant(orig), lower);
            assert_eq!(Upper.apply_to_variant(orig), upper);
            assert_eq!(Pascal.apply_to_variant(orig), pascal);
            assert_eq!(Camel.apply_to_variant(orig), camel);
            assert_eq!(Snake.apply_to_variant(orig), snake);
            assert_eq!(ScreamingSnake.apply_to_variant(orig), screaming);
            assert_eq!(Kebab.apply_to_variant(orig), kebab);
            assert_eq!(ScreamingKebab.apply_to_variant(orig), sk);
        }
    }

    #[test]
    fn fields_follow_serde() {
        let cases = [
            (
                "outcome", "OUTCOME", "Outcome", "outcome", "OUTCOME", "outcome", "OUTCOME",
            ),
            (
                "very_tasty",
                "VERY_TASTY",
                "VeryTasty",
                "veryTasty",
                "VERY_TASTY",
                "very-tasty",
                "VERY-TASTY",
            ),
            ("a", "A", "A", "a", "A", "a", "A"),
            ("z42", "Z42", "Z42", "z42", "Z42", "z42", "Z42"),
        ];
        for (orig, upper, pascal, camel, screaming, kebab, sk) in cases {
            assert_eq!(Lower.apply_to_field(orig), orig);
            assert_eq!(Upper.apply_to_field(orig), upper);
            assert_eq!(Pascal.apply_to_field(orig), pascal);
            assert_eq!(Camel.apply_to_field(orig), camel);
            assert_eq!(Snake.apply_to_field(orig), orig);
            assert_eq!(ScreamingSnake.apply_to_field(orig), screaming);
            assert_eq!(Kebab.apply_to_field(orig), kebab);
            assert_eq!(ScreamingKebab.apply_to_field(orig), sk);
        }
    }
}
